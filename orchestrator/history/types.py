"""The results database's records: what one run puts in it (RunEntry, DeviceEntry, Figure) and what
`edgefarm history` reads back (Point, Series, Change, Stability). Frozen; dicts only at the edges."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import catalogue
from ..catalogue import HISTORY, KEPT, figures, measures
from ..report.types import SampleCell

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


def shows_change(change_field: str, figure: str) -> bool:
    """Whether a change of a paired field (a SampleCell field, or "passed" for verdict flips) is a
    change of this figure (wall_ms -> sample_ms_p50, passed -> pass_rate_pct)."""
    if change_field == "passed":
        return figure == "pass_rate_pct"
    spec = figure_spec(figure)
    return spec.measure == change_field and spec.stat == "p50"


@dataclass(frozen=True)
class Figure:
    value: float | None
    lo: float | None = None  # 95% interval (Wilson for rates, bootstrap for the rest); None: no sample
    hi: float | None = None


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
    bench_rows: tuple[
        Mapping[str, Any], ...
    ] = ()  # `edgefarm bench`: its llama-bench rows (bench/results.py)


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


@dataclass(frozen=True)
class Change:
    """A significant difference of a device's run against its last comparable run (paired, on the
    samples both ran: report/paired.py)."""

    device: str
    figure: str  # PairedFigure label ("Time per sample", "Decode", ...) or "Pass"
    field: str  # SampleCell field, or "passed" for verdict flips
    run_id: str
    previous_run_id: str
    ratio: float | None  # B/A (None for flips)
    lo: float | None
    hi: float | None
    pairs: int
    worse: bool
    detail: str  # the figure's text (`1.10x (1.09–1.11): ... worse`, `3 pass→fail ...`)
    versions: str  # what changed between the two runs (`runtime 0.17 → 0.18`), or "same versions"

    def text(self) -> str:
        return (f"{self.device}: {self.figure} {'worse' if self.worse else 'better'} in {self.run_id} than in "
                f"{self.previous_run_id} ({self.versions}): {self.detail}")  # fmt: skip


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
    rolling_sd: Mapping[str, tuple[float | None, ...]] = field(default_factory=dict)  # figure -> per point
