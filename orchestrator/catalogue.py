"""The one figure catalogue (pure): every figure edgefarm reports, defined once, and the outside names
for them, mapped once. lm-eval's `register_metric(higher_is_better=..., aggregation=...)` and
llama-bench's one field list, for edgefarm's figures.

Two kinds of row. A `Measure` is a figure of one sample run: a device-side field of the runner's
row (android_runner/contract.py SampleResult) and the report cell's field of the same name. A
`Figure` is a device's figure in a run: a statistic (`stat`) of a measure over the device's runs,
with its interval. Every reader walks these rows, none lists figures again: the report's records
(report/types/: DeviceRow and SampleCell get a field for every row they do not declare), combine,
intervals, paired comparisons, the terminal, markdown and html tables, the drill-down, the csv/jsonl
exports, the results database (history: its figures, its kept sample columns, its tables and charts),
`--sustain`'s per-pass tables and chart (sustain.py, bench/sustained.py) and `edgefarm bench` (its
cells and llama-bench rows). `views` says where a row shows beyond report.json.

A new figure: one `Measure` row (with its `Figure` rows) here and its SampleResult field on the
device side, listed below or `register`ed before the readers are imported
(tests/unit/test_catalogue_new_figure.py registers one and finds it in every output).

This module sits low: it imports only the energy trust predicate, so every stage may import it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .telemetry.energy import energy_trusted

# views of a Figure, beyond report.json
WIDE = "wide"  # the wide device table (report.md, `report --format term --wide`)
DECISIVE = "decisive"  # the compact "which device?" table (html, terminal), in catalogue order
DETAILS = "details"  # the details line under the compact table
EXPORT = "export"  # the csv/jsonl export's device columns (`device_<name>`, `_lo`, `_hi`)
HISTORY = "history"  # kept by the results database (history_figures), with its stability
HISTORY_TABLE = "history table"  # `edgefarm history`'s markdown table and html charts
# views of a Measure
DRILL = "drill"  # a column of the html drill-down (every sample on every device)
DISTRIBUTION = "distribution"  # the report's distribution table and chart (p10/p50/p90)
ENERGY_CHART = "energy chart"  # the report's energy table and chart
KEPT = "kept"  # a column of the results database's history_samples (what `compare` pairs)
PER_PASS = "per pass"  # --sustain: the run's per-pass table and chart (the median over a pass's ok samples,
# as % of pass 1 in the chart); a bench measure also bench's (each cell against its own pass 1)
# how `edgefarm bench` shows a Measure (its cells: mean, sd, 95% interval over the repetitions)
SPEED = "speed"  # llama-bench's speed fields (avg_ts, stddev_ts, samples_ts, ...) of its pp/tg row
ON_TG = "tg"  # `<name>` (the mean) and `<name>_sd` on the tg row


@dataclass(frozen=True)
class Column:
    """A table column: a field of a record, its label, unit and format (printers read these)."""

    field: str
    label: str
    unit: str = ""
    fmt: str = "{}"

    def render(self, value: Any) -> str:
        if value is None or value == "":
            return "–"
        try:
            return self.fmt.format(value)
        except (ValueError, TypeError):
            return str(value)

    def render_ci(self, value: Any, interval: tuple[float, float] | None) -> str:
        """The value and its 95% interval, `12.3 (11.8–13.1)`; the value alone without one."""
        text = self.render(value)
        if interval is None or value is None:
            return text
        return f"{text} ({self.render(interval[0])}–{self.render(interval[1])})"

    @property
    def header(self) -> str:
        """`Decode (tok/s)`; the label alone without a unit."""
        return f"{self.label} ({self.unit})" if self.unit else self.label


@dataclass(frozen=True)
class Measure:
    """A figure of one sample run: the SampleResult field(s) it is read from (`sources`, default its
    own name; several: the largest) and the SampleCell field of its name. `label` is what paired
    comparisons print (report.json's PairedFigure.label), `title` the longer name of its distribution."""

    name: str
    label: str
    unit: str
    higher_is_better: bool
    fmt: str = "{:.0f}"  # one sample's value (the drill-down)
    title: str = ""
    sources: tuple[str, ...] = ()
    paired: bool = True  # compared sample by sample between devices and runs (paired.py)
    positive: bool = False  # 0 means not measured (a speed the runtime did not report)
    energy: bool = False  # counted only when the power reading can be trusted (telemetry/energy.py)
    views: frozenset[str] = frozenset()
    bench: str = ""  # SPEED, ON_TG or "" (not a bench figure)
    bench_test: str = ""  # SPEED: llama-bench's test of its row (pp: prefill, tg: decode)

    @property
    def field(self) -> str:
        return self.name

    @property
    def heading(self) -> str:
        return self.title or self.label

    @property
    def column(self) -> Column:
        """A table column of one sample's value (or a median of such values): label, unit, format."""
        return Column(self.name, self.label, self.unit, self.fmt)

    def cell(self, row: Any) -> float | None:
        """What a sample's cell keeps of the device's row: the value (the largest of `sources`), None
        for an energy figure whose reading is not trusted."""
        if self.energy and not energy_trusted(row):
            return None
        if not self.sources:
            return getattr(row, self.name, None)
        return max(filter(None, (getattr(row, s, None) for s in self.sources)), default=None)

    def value(self, row: Any) -> float | None:
        """The row's value that counts in a statistic (a cell's too): None when it has none (0 of a
        `positive` measure: not measured)."""
        v = self.cell(row)
        return (v or None) if self.positive else v


def _views(*names: str) -> frozenset[str]:
    return frozenset(names)


# fmt: off
MEASURES: tuple[Measure, ...] = (
    Measure("wall_ms", "Time per sample", "ms", False, views=_views(DRILL, KEPT, PER_PASS)),
    Measure("ttft_ms", "TTFT", "ms", False, views=_views(DRILL, DISTRIBUTION, KEPT), bench=ON_TG),
    Measure("prefill_tps", "Prefill", "tok/s", True, positive=True, views=_views(DISTRIBUTION, KEPT, PER_PASS),
            bench=SPEED, bench_test="pp"),
    Measure("decode_tps", "Decode", "tok/s", True, positive=True,
            views=_views(DRILL, DISTRIBUTION, KEPT, PER_PASS),
            bench=SPEED, bench_test="tg"),
    Measure("energy_j", "Energy", "J", False, "{:.2f}", "Energy per sample", energy=True,
            views=_views(ENERGY_CHART, KEPT)),
    Measure("energy_mj_per_token", "Energy per token", "mJ", False, "{:.1f}", paired=False, energy=True,
            views=_views(ENERGY_CHART), bench=ON_TG),
    Measure("peak_rss_mb", "Peak RSS", "MB", False, sources=("peak_rss_mb", "peak_hwm_mb"), paired=False,
            views=_views(KEPT)),
)
# fmt: on


@dataclass(frozen=True)
class Figure:
    """A device's figure in a run (a DeviceRow field). `measure` and `stat`: "pNN", the NN-th percentile
    of that measure over the device's ok runs (first runs and --repeat's repeats); "max", its largest
    over every row. Without a measure the figure is computed where its `stat` says (combine.py: rates,
    the engine load, the hottest reading; cells.py: the speed-up). `interval`: "bootstrap" (percentile
    bootstrap over the samples), "wilson" (a pass rate) or "" (none). `higher_is_better` None: no
    direction (never marked best)."""

    column: Column
    higher_is_better: bool | None
    measure: str = ""
    stat: str = ""
    interval: str = ""
    views: frozenset[str] = frozenset()

    @property
    def field(self) -> str:
        return self.column.field

    @property
    def q(self) -> float | None:
        """The percentile of a "pNN" statistic, None for any other."""
        return float(self.stat[1:]) if self.stat[:1] == "p" and self.stat[1:].isdigit() else None

    @property
    def on_row(self) -> bool:
        """A DeviceRow field (the speed-up is computed by the tables, against the baseline device)."""
        return self.stat != "vs baseline"


def _f(name: str, label: str, unit: str, fmt: str, higher: bool | None, measure: str = "", stat: str = "",
       interval: str = "", views: Iterable[str] = ()) -> Figure:  # fmt: skip
    return Figure(Column(name, label, unit, fmt), higher, measure, stat, interval, frozenset(views))


# in the order of the compact table, its details line, the intervals and the exports
# fmt: off
FIGURES: tuple[Figure, ...] = (
    _f("pass_rate_pct", "Pass", "%", "{:.1f}", True, stat="rate", interval="wilson",
       views=(WIDE, DECISIVE, EXPORT, HISTORY, HISTORY_TABLE)),
    _f("strict_pass_rate_pct", "Strict pass", "%", "{:.1f}", True, stat="rate", interval="wilson",
       views=(WIDE, DECISIVE, EXPORT, HISTORY)),
    _f("ttft_ms_p50", "TTFT p50", "ms", "{:.1f}", False, "ttft_ms", "p50", "bootstrap",
       (WIDE, DECISIVE, EXPORT, HISTORY, HISTORY_TABLE)),
    _f("ttft_ms_p90", "TTFT p90", "ms", "{:.1f}", False, "ttft_ms", "p90", "bootstrap",
       (WIDE, DETAILS, EXPORT, HISTORY)),
    _f("prefill_tps_p50", "Prefill", "tok/s", "{:.0f}", True, "prefill_tps", "p50", "bootstrap",
       (WIDE, DETAILS, EXPORT, HISTORY, HISTORY_TABLE)),
    _f("prefill_tps_p90", "Prefill p90", "tok/s", "{:.0f}", True, "prefill_tps", "p90"),
    _f("decode_tps_p50", "Decode", "tok/s", "{:.0f}", True, "decode_tps", "p50", "bootstrap",
       (WIDE, DECISIVE, EXPORT, HISTORY, HISTORY_TABLE)),
    _f("decode_tps_p90", "Decode p90", "tok/s", "{:.0f}", True, "decode_tps", "p90"),
    _f("sample_ms_p50", "Time/sample", "ms", "{:.0f}", False, "wall_ms", "p50", "bootstrap",
       (WIDE, DECISIVE, HISTORY, HISTORY_TABLE)),
    _f("init_ms", "Init", "ms", "{:.0f}", False, stat="max", views=(WIDE, DETAILS, HISTORY)),
    _f("peak_rss_mb", "Peak RSS", "MB", "{:.0f}", False, "peak_rss_mb", "max",
       views=(WIDE, HISTORY, HISTORY_TABLE)),
    _f("speedup", "Speed-up", "x", "{:.2f}", True, "wall_ms", "vs baseline", views=(DECISIVE,)),
    _f("energy_j_p50", "Energy p50", "J", "{:.2f}", False, "energy_j", "p50", "bootstrap",
       (WIDE, DECISIVE, EXPORT, HISTORY)),
    _f("energy_mj_per_token_p50", "Energy/token p50", "mJ", "{:.1f}", False, "energy_mj_per_token", "p50",
       "bootstrap", (WIDE, DETAILS, HISTORY)),
    _f("thermal_max_c", "Max temp", "°C", "{:.1f}", None, stat="max", views=(WIDE, DETAILS)),
)
# fmt: on


@dataclass(frozen=True)
class OutsideName:
    """A name another tool or an older file gives one of ours: `outside` in `where` is our `name`
    times `scale`, rounded to `digits` places (None: as is)."""

    where: str
    outside: str
    name: str
    scale: float = 1.0
    digits: int | None = None


LLAMA_BENCH = "llama-bench"  # its row fields (`edgefarm bench -o`): a speed row's mean, sd, samples
LITERT_TABLE = "LiteRT-LM table"  # LiteRT-LM's published benchmark table (`edgefarm history --export`)
EDGEMM_CARD = "EdgeMMEval card"  # its report.json summary (scoring/record.py), whose pass rate is ours
DATABASE = "results database"  # history_figures.figure values written before schema 3
OLD_BENCH_JSON = "bench.json before issue 42"  # its cells named the speeds as llama-bench's `_ts`
OUTSIDE_NAMES: tuple[OutsideName, ...] = (
    OutsideName(LLAMA_BENCH, "avg_ts", "mean"),  # of the row's SPEED measure (bench_test)
    OutsideName(LLAMA_BENCH, "stddev_ts", "sd"),
    OutsideName(LLAMA_BENCH, "samples_ts", "samples"),
    OutsideName(LITERT_TABLE, "prefill_tokens_per_sec", "prefill_tps_p50", digits=2),
    OutsideName(LITERT_TABLE, "decode_tokens_per_sec", "decode_tps_p50", digits=2),
    OutsideName(LITERT_TABLE, "time_to_first_token_sec", "ttft_ms_p50", 1e-3, 3),
    OutsideName(LITERT_TABLE, "cpu_memory_mb", "peak_rss_mb", digits=1),
    OutsideName(EDGEMM_CARD, "pass_rate_pct", "pass_rate_pct"),  # the card's summary: the same name
    OutsideName(DATABASE, "wall_ms_p50", "sample_ms_p50"),  # history's own median until schema 3
    OutsideName(OLD_BENCH_JSON, "prefill_ts", "prefill_tps"),
    OutsideName(OLD_BENCH_JSON, "decode_ts", "decode_tps"),
)


def outside_names(where: str) -> dict[str, OutsideName]:
    """The outside names of one tool or file: outside name -> its row."""
    return {o.outside: o for o in OUTSIDE_NAMES if o.where == where}


MEASURE: Mapping[str, Measure] = {}
FIGURE: Mapping[str, Figure] = {}
PERCENTILES: tuple[Figure, ...] = ()
BOOTSTRAPPED: tuple[Figure, ...] = ()
HIGHER_IS_BETTER: Mapping[str, bool] = {}
PAIRED: tuple[Measure, ...] = ()


def _derive() -> None:
    """The lookups every reader takes, made from the rows."""
    global MEASURE, FIGURE, PERCENTILES, BOOTSTRAPPED, HIGHER_IS_BETTER, PAIRED
    MEASURE = {m.name: m for m in MEASURES}
    FIGURE = {f.field: f for f in FIGURES}
    PERCENTILES = tuple(f for f in FIGURES if f.measure and f.q is not None)
    BOOTSTRAPPED = tuple(f for f in PERCENTILES if f.interval == "bootstrap")
    HIGHER_IS_BETTER = {f.field: f.higher_is_better for f in FIGURES if f.higher_is_better is not None}
    PAIRED = tuple(m for m in MEASURES if m.paired)


def register(measure: Measure | None, *more: Figure) -> None:
    """Add a measure and its figures (lm-eval's register_metric). Readers take the catalogue when they
    are imported, so a registration comes first (a plugin's import, the catalogue test's process);
    a name registered twice is refused."""
    global MEASURES, FIGURES
    figure_names = [f.field for f in more]
    taken = [n for n in ([measure.name] if measure else []) if n in MEASURE]
    taken += [n for i, n in enumerate(figure_names) if n in FIGURE or n in figure_names[:i]]
    if taken:
        raise ValueError(f"figure {taken[0]!r} registered twice")  # a programming error
    MEASURES = MEASURES + ((measure,) if measure else ())
    FIGURES = FIGURES + tuple(more)
    _derive()


_derive()


def figures(view: str) -> tuple[Figure, ...]:
    """The figures a view shows, in catalogue order."""
    return tuple(f for f in FIGURES if view in f.views)


def measures(view: str) -> tuple[Measure, ...]:
    """The measures a view shows, in catalogue order."""
    return tuple(m for m in MEASURES if view in m.views)


def with_fields(names: Iterable[str]) -> Callable[[type], type]:
    """A record (before @dataclass) with a `float | None = None` field for each catalogue name it does
    not declare, after its own fields: the report's records carry a new catalogue row without an edit,
    and the fields they declared keep their place (report.json's key order)."""

    def add(cls: type) -> type:
        own = inspect.get_annotations(cls)
        for name in names:
            if name not in own:
                own[name] = "float | None"
                setattr(cls, name, None)
        cls.__annotations__ = own
        return cls

    return add
