"""The results database's records: what one run puts in it (RunEntry, DeviceEntry, Figure) and what
`edgefarm history` reads back (Point, Series, Change, Stability). Frozen; dicts only at the edges."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import catalogue
from ..catalogue import HISTORY, KEPT, figures, measures
from ..report.types.sample_row import SampleCell

if TYPE_CHECKING:
    from ..bench.rows import LlamaRow

# the device figures the database keeps (history_figures rows, by catalogue name) and the SampleCell
# fields a sample's row keeps (history_samples columns: what `compare`'s paired statistics read)
FIGURES: tuple[catalogue.Figure, ...] = figures(HISTORY)
FIGURE_NAMES = tuple(f.field for f in FIGURES)
KEPT_MEASURES = tuple(m.name for m in measures(KEPT))
SAMPLE_FIELDS = ("status", "passed", "strict_passed", "score", *KEPT_MEASURES, "output_sha")


def kept_cell(values: Mapping[str, Any]) -> SampleCell:
    """A sample's cell as the history keeps it: SAMPLE_FIELDS only (the answer stays in the run folder)."""
    return SampleCell(output="", **{f: values.get(f) for f in SAMPLE_FIELDS})


def figure_spec(name: str) -> catalogue.Figure:
    return catalogue.FIGURE[name]


def tail_field(figure: catalogue.Figure) -> str:
    """The kept sample field a figure is a statistic of ('' when the samples do not keep it)."""
    return figure.measure if figure.measure in KEPT_MEASURES else ""


@dataclass(frozen=True)
class Figure:
    value: float | None
    lo: float | None = None  # 95% interval (Wilson for rates, bootstrap for the rest); None: no sample
    hi: float | None = None


@dataclass(frozen=True)
class Identity:
    """What ran on a device, as the history keeps it: outcome.json's `runner` stamp (runners/stamp.py:
    the runner's name and sha256, the runtime's version and sha256, its settings' token limit), decoded
    here once for runs and benches alike."""

    runner: str = ""
    runner_sha256: str = ""
    runtime_version: str = ""
    runtime_sha256: str = ""
    context_tokens: int | None = None  # settings.max_num_tokens: the runtime's token limit (its KV cache)

    @classmethod
    def from_stamp(cls, stamp: Mapping[str, Any] | None) -> Identity:
        stamp = stamp if isinstance(stamp, Mapping) else {}
        settings = stamp.get("settings") if isinstance(stamp.get("settings"), Mapping) else {}
        tokens = settings.get("max_num_tokens")
        return cls(*(str(stamp.get(k) or "") for k in ("runner", "runner_sha256", "runtime_version", "runtime_sha256")),
                   tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None)  # fmt: skip


@dataclass(frozen=True)
class DeviceEntry:
    """One device of one run: what it ran with, its figures and every sample's row."""

    device: str
    kind: str
    hardware: str
    soc: str
    backend: str  # what ran
    runner: str
    runner_sha256: str
    runtime_version: str
    runtime_sha256: str
    config: Mapping[str, Any]  # what must be equal for two runs to be compared (history/config.py)
    config_key: str
    error: str
    figures: Mapping[str, Figure]  # FIGURE_NAMES name -> value with its interval
    samples: Mapping[str, SampleCell]  # sample id -> its cell (SAMPLE_FIELDS kept)
    context_tokens: int | None = None  # the runtime's token limit the device ran with (its KV cache)


@dataclass(frozen=True)
class RunEntry:
    """One run's record: its stamp and its devices."""

    run_id: str
    kind: str  # run | bench
    started_at: str
    finished_at: str
    folder: str  # the run folder (absolute): the source of truth, report.html inside
    host: str
    edgefarm_version: str
    edgefarm_git: str
    model_name: str
    model_sha256: str
    dataset_path: str
    dataset_sha256: str
    slice_sha256: str  # sha256 of the sample ids, in order
    samples: int
    shape: str
    flags: Mapping[str, Any]
    versions: Mapping[str, Any]
    devices: tuple[DeviceEntry, ...]
    model_size_bytes: int | None = None
    quantization: str = ""  # the model's largest section's (run.json model facts)
    conditions: str = ""  # run.json `conditions` as canonical JSON ('' when not recorded)
    bench_rows: tuple[LlamaRow, ...] = ()  # `edgefarm bench`: its llama-bench rows (bench/rows.py)


@dataclass(frozen=True)
class Point:
    """One device in one run, as the history reads it back."""

    run_id: str
    started_at: str
    finished_at: str
    folder: str
    model_sha256: str
    runtime_version: str
    runtime_sha256: str
    runner_sha256: str
    edgefarm_version: str
    backend: str
    figures: Mapping[str, Figure]
    context_tokens: int | None = None
    model_name: str = ""
    model_size_bytes: int | None = None
    quantization: str = ""
    conditions: tuple[str, ...] = ()  # what was bad during the run for this device (entry.condition_problems)


@dataclass(frozen=True)
class Change:
    """A run whose figure left the usual band of the comparable runs before it (history/judge.py)."""

    device: str
    figure: str  # FIGURES name (sample_ms_p50, ...)
    run_id: str
    previous_run_id: str  # the last run it was judged against (the versions are named against it)
    value: float
    mean: float  # of the earlier runs judged against
    lo: float  # their 99% band for one more run
    hi: float
    runs: int  # how many earlier runs the judgement rests on
    worse: bool
    confirmed: bool | None  # the next run stayed there (None: the latest run, the next one will tell)
    versions: str  # what changed against previous_run_id (`runtime 0.17 → 0.18`), or "same versions"
    # what was bad during this run (Point.conditions): a reason to exclude it
    conditions: tuple[str, ...] = ()

    @property
    def ratio(self) -> float:
        return self.value / self.mean if self.mean else float("nan")

    def text(self) -> str:
        col = figure_spec(self.figure).column
        unit = f" {col.unit}" if col.unit else ""
        pending = (
            "" if self.confirmed else " (the latest run: the next one confirms it or marks it an outlier)"
        )
        if self.conditions:
            tags = ", ".join(sorted({c.split(":")[0] for c in self.conditions}))
            pending += f"; this run was {tags} (its report says how): if that disturbed it, `history exclude`"
        times = f"{self.ratio:.2f}x" if self.mean else "against 0 for"  # a pass rate that was 0 every run
        return (f"{self.device}: {col.label} {'worse' if self.worse else 'better'} in {self.run_id}: "
                f"{number(self.value)}{unit}, {times} the mean of the {self.runs} comparable runs "
                f"before it ({number(self.mean)}{unit}; usual {number(self.lo)}–{number(self.hi)}{unit}); "
                f"{self.versions}{pending}")  # fmt: skip


def number(v: float | None) -> str:
    """A figure for people: 3 significant digits, thousands grouped, never an exponent (1,234; 12.3; 0.123)."""
    if v is None:
        return "–"
    a = abs(v)
    if a >= 100:
        return f"{v:,.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


@dataclass(frozen=True)
class Judgement:
    """One figure of one run against the earlier comparable runs."""

    run_id: str
    figure: str
    state: str  # one of judge.py's STATES
    value: float | None
    runs: int  # the earlier comparable runs the judgement rests on
    mean: float | None = None  # their mean (None: too few)
    lo: float | None = None  # the 99% band for one more run like them
    hi: float | None = None
    worse: bool | None = None  # CHANGE/OUTLIER: the figure moved the wrong way
    confirmed: bool | None = None  # CHANGE: the next run stayed (None: the latest run, not yet known)
    note: str = ""  # EXCLUDED: why; FOLLOWS: the run of the change

    @property
    def ratio(self) -> float | None:
        return None if self.value is None or not self.mean else self.value / self.mean


@dataclass(frozen=True)
class Stability:
    """How much a figure scatters over a device's last comparable runs."""

    figure: str
    runs: int
    cv_pct: float | None  # sd / mean of the runs' values, in %
    p99_p50: float | None  # over the pooled per-sample values of those runs
    rolling_sd: float | None  # sd of those runs' values (the last point of `Series.rolling_sd`)


@dataclass(frozen=True)
class Series:
    """One device in one configuration over time (oldest first)."""

    device: str
    hardware: str
    config: Mapping[str, Any]
    config_key: str
    points: tuple[Point, ...]
    changes: tuple[Change, ...] = ()
    stability: tuple[Stability, ...] = ()
    # figure -> each shown point's judgement against the runs before it (None: no value); history/judge.py
    judgements: Mapping[str, tuple[Judgement | None, ...]] = field(default_factory=dict)
    rolling_sd: Mapping[str, tuple[float | None, ...]] = field(default_factory=dict)  # figure -> per point
