"""The one table of the report's figures (pure): each defined once, with its label, unit, format, which
way is better, the per-sample measure it is a statistic of, the statistic and its interval. combine.py
computes the device rows' figures from it, intervals.py their intervals, cells.py marks the best
value, paired.py compares devices sample by sample, and every printer takes labels and units from it.
A new figure is one `Figure` line here and its DeviceRow field (report/types.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..telemetry.energy import energy_trusted


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


@dataclass(frozen=True)
class Measure:
    """A figure of one sample run (a SampleResult / SampleCell field)."""

    field: str
    label: str
    higher_is_better: bool
    paired: bool = True  # compared sample by sample between devices (paired.py)
    positive: bool = False  # 0 means not measured (a speed the runtime did not report)
    energy: bool = False  # counted only when the power reading can be trusted (telemetry/energy.py)

    def value(self, row: Any) -> float | None:
        """The row's value, None when it has none that counts."""
        if self.energy and not energy_trusted(row):
            return None
        v = getattr(row, self.field)
        return (v or None) if self.positive else v


MEASURES: tuple[Measure, ...] = (
    Measure("wall_ms", "Time per sample", False),
    Measure("ttft_ms", "TTFT", False),
    Measure("prefill_tps", "Prefill", True, positive=True),
    Measure("decode_tps", "Decode", True, positive=True),
    Measure("energy_j", "Energy", False, energy=True),
    Measure("energy_mj_per_token", "Energy per token", False, paired=False, energy=True),
)
MEASURE: Mapping[str, Measure] = {m.field: m for m in MEASURES}


@dataclass(frozen=True)
class Figure:
    """A device row's figure. `measure` and `q`: the q-th percentile of that measure over the device's
    ok runs (first runs and --repeat's repeats); `interval`: "bootstrap" (percentile bootstrap over
    the samples), "wilson" (a pass rate) or "" (none). `higher_is_better` None: no direction (never
    marked best)."""

    column: Column
    higher_is_better: bool | None
    measure: str = ""
    q: float | None = None
    interval: str = ""

    @property
    def field(self) -> str:
        return self.column.field


FIGURES: tuple[Figure, ...] = (
    Figure(Column("pass_rate_pct", "Pass", "%", "{:.1f}"), True, interval="wilson"),
    Figure(Column("strict_pass_rate_pct", "Strict pass", "%", "{:.1f}"), True, interval="wilson"),
    Figure(Column("init_ms", "Init", "ms", "{:.0f}"), False),
    Figure(Column("ttft_ms_p50", "TTFT p50", "ms", "{:.1f}"), False, "ttft_ms", 50, "bootstrap"),
    Figure(Column("ttft_ms_p90", "TTFT p90", "ms", "{:.1f}"), False, "ttft_ms", 90, "bootstrap"),
    Figure(Column("prefill_tps_p50", "Prefill", "tok/s", "{:.0f}"), True, "prefill_tps", 50, "bootstrap"),
    Figure(Column("prefill_tps_p90", "Prefill p90", "tok/s", "{:.0f}"), True, "prefill_tps", 90),
    Figure(Column("decode_tps_p50", "Decode", "tok/s", "{:.0f}"), True, "decode_tps", 50, "bootstrap"),
    Figure(Column("decode_tps_p90", "Decode p90", "tok/s", "{:.0f}"), True, "decode_tps", 90),
    Figure(Column("sample_ms_p50", "Time/sample", "ms", "{:.0f}"), False, "wall_ms", 50, "bootstrap"),
    Figure(Column("peak_rss_mb", "Peak RSS", "MB", "{:.0f}"), False),
    Figure(Column("thermal_max_c", "Max temp", "°C", "{:.1f}"), None),
    Figure(Column("energy_j_p50", "Energy p50", "J", "{:.2f}"), False, "energy_j", 50, "bootstrap"),
    Figure(
        Column("energy_mj_per_token_p50", "Energy/token p50", "mJ", "{:.1f}"),
        False,
        "energy_mj_per_token",
        50,
        "bootstrap",
    ),
    Figure(Column("speedup", "Speed-up", "x", "{:.2f}"), True),  # against the baseline device (cells.py)
)
FIGURE: Mapping[str, Figure] = {f.field: f for f in FIGURES}
PERCENTILES: tuple[Figure, ...] = tuple(f for f in FIGURES if f.measure and f.q is not None)
BOOTSTRAPPED: tuple[Figure, ...] = tuple(f for f in PERCENTILES if f.interval == "bootstrap")
HIGHER_IS_BETTER: Mapping[str, bool] = {
    f.field: f.higher_is_better for f in FIGURES if f.higher_is_better is not None
}
