"""The history as series: each device in each comparable configuration over time, each run's figures
judged against the comparable runs before it (history/judge.py), and how stable each figure is (pure;
the samples come through a callable).

Stability over the last `window` comparable runs (ExecuTorch's benchmark dashboard scores devices the
same way): the coefficient of variation of the runs' values (sd / mean), p99/p50 of the pooled
per-sample values (the tail), and the rolling sd (the sd of the last `window` values at each run).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence

from ..report.types.sample_row import SampleCell
from ..stats import quantile
from .judge import judge_figure
from .regress import changes
from .store import DeviceRun
from .types import FIGURES, Judgement, Point, Series, Stability, tail_field

DEFAULT_WINDOW = 10
MAX_WINDOW = 100
DEFAULT_LAST = 20
MAX_LAST = 1000

Cells = Callable[[str, str], Mapping[str, SampleCell]]  # (run id, device) -> sample id -> cell
Excluded = Mapping[tuple[str, str], str]  # (run id, device or "" for every device) -> why


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


def judge_series(
    device: str, points: Sequence[Point], window: int, excluded: Excluded
) -> dict[str, tuple[Judgement | None, ...]]:
    """figure -> each point's judgement, for every figure some point has."""
    why = {
        p.run_id: w for p in points if (w := excluded.get((p.run_id, device)) or excluded.get((p.run_id, "")))
    }
    return {s.field: judge_figure(points, s.field, s.higher_is_better, window, why)
            for s in FIGURES if any(s.field in p.figures for p in points)}  # fmt: skip


def build_series(rows: Sequence[DeviceRun], cells: Cells, window: int = DEFAULT_WINDOW,
                 last: int = DEFAULT_LAST, excluded: Excluded | None = None) -> list[Series]:  # fmt: skip
    """Group rows (oldest first) by device and configuration; every run judged against the runs before
    it (all of them read, the last `last` shown)."""
    groups: dict[tuple[str, str], list[DeviceRun]] = {}
    for r in rows:
        groups.setdefault((r.device, r.config_key), []).append(r)
    out = []
    for (device, key), runs in sorted(groups.items()):
        every = [r.point for r in runs]
        judged = judge_series(device, every, window, excluded or {})
        points = tuple(every[-last:])
        shown = {f: js[-last:] for f, js in judged.items()}
        recent = [cells(p.run_id, device) for p in points[-window:]]
        out.append(Series(
            device=device, hardware=runs[-1].hardware, config=runs[-1].config, config_key=key, points=points,
            changes=tuple(c for c in changes(device, every, judged) if c.run_id in {p.run_id for p in points}),
            stability=stability(points, recent, window), judgements=shown,
            rolling_sd={s.field: rolling_sd(points, s.field, window) for s in FIGURES
                        if any(s.field in p.figures for p in points)},
        ))  # fmt: skip
    return out
