"""The history as series: each device in each comparable configuration over time, with its changes
between consecutive runs and how stable each figure is (pure; the samples come through a callable).

Stability over the last `window` comparable runs (ExecuTorch's benchmark dashboard scores devices the
same way): the coefficient of variation of the runs' values (sd / mean), p99/p50 of the pooled
per-sample values (the tail), and the rolling sd (the sd of the last `window` values at each run).
A 3% change on a device whose runs scatter 8% is noise; the table shows both side by side.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence

from ..report.types import SampleCell
from ..stats import Resamples, quantile
from .regress import changes
from .store import DeviceRun
from .types import FIGURES, Change, Point, Series, Stability, tail_field

DEFAULT_WINDOW = 5
MAX_WINDOW = 100
DEFAULT_LAST = 20
MAX_LAST = 1000

Cells = Callable[[str, str], Mapping[str, SampleCell]]  # (run id, device) -> sample id -> cell


def _sd(values: Sequence[float]) -> float | None:
    return statistics.stdev(values) if len(values) >= 2 else None


def rolling_sd(points: Sequence[Point], figure: str, window: int) -> tuple[float | None, ...]:
    out = []
    for i in range(len(points)):
        values = [f.value for p in points[max(0, i - window + 1) : i + 1] if (f := p.figures.get(figure))]
        sd = _sd([v for v in values if v is not None])
        out.append(None if sd is None else round(sd, 4))
    return tuple(out)


def stability(
    points: Sequence[Point], cells: Sequence[Mapping[str, SampleCell]], window: int
) -> tuple[Stability, ...]:
    """Each figure's scatter over the last `window` points (`cells`: those points' samples)."""
    recent, recent_cells = points[-window:], cells[-window:]
    out = []
    for spec in FIGURES:
        values = [f.value for p in recent if (f := p.figures.get(spec.field)) and f.value is not None]
        if not values:
            continue
        sd, mean = _sd(values), statistics.fmean(values)
        cv = round(100.0 * sd / abs(mean), 2) if sd is not None and mean else None
        tail = None
        if field := tail_field(spec):
            pooled = [v for cs in recent_cells for c in cs.values()
                      if c.status == "ok" and (v := getattr(c, field)) is not None]  # fmt: skip
            p50, p99 = quantile(pooled, 0.5), quantile(pooled, 0.99)
            tail = round(p99 / p50, 4) if p50 and p99 is not None else None
        out.append(Stability(spec.field, len(values), cv, tail, None if sd is None else round(sd, 4)))
    return tuple(out)


def build_series(rows: Sequence[DeviceRun], cells: Cells, window: int = DEFAULT_WINDOW,
                 last: int = DEFAULT_LAST) -> list[Series]:  # fmt: skip
    """Group rows (oldest first) by device and configuration; the last `last` runs of each, each run
    compared with the one before it (the run before the first shown included)."""
    groups: dict[tuple[str, str], list[DeviceRun]] = {}
    for r in rows:
        groups.setdefault((r.device, r.config_key), []).append(r)
    out = []
    draws = Resamples()
    for (device, key), runs in sorted(groups.items()):
        shown = runs[-last:]
        before = runs[-last - 1] if len(runs) > last else None
        compared = ([before] if before else []) + shown
        samples = [cells(r.point.run_id, device) for r in compared]
        found: list[Change] = []
        for i in range(1, len(compared)):
            found += changes(
                device, compared[i - 1].point, compared[i].point, samples[i - 1], samples[i], draws
            )
        points = tuple(r.point for r in shown)
        shown_cells = samples[1:] if before else samples
        out.append(Series(
            device=device, hardware=runs[-1].hardware, config=runs[-1].config, config_key=key, points=points,
            changes=tuple(found), stability=stability(points, shown_cells, window),
            rolling_sd={s.field: rolling_sd(points, s.field, window) for s in FIGURES
                        if any(s.field in p.figures for p in points)},
        ))  # fmt: skip
    return out
