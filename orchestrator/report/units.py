"""`edgefarm run --units`: identical devices (farm/shard.py identical_groups) that each ran every sample,
compared unit against unit (pure; docs/conditions.md).

Per group and paired figure (the catalogue's), on the samples every unit ran ok: each sample's values are
taken relative to that sample's geometric mean over the units (so easy and hard samples weigh alike), and
- a unit's level is the geometric mean of its relative values (1.0: typical of the group);
- the between-unit spread is the coefficient of variation of the levels, with a 95% percentile bootstrap
  interval over the samples (the units' rows resampled together, as they ran the same samples);
- the within-unit spread is how much a unit's relative values scatter around its own level (their CV),
  the median over the units: the noise a single unit's figure carries;
- a unit stands out when its level is more than OUTLIER_FRACTION off the median of the OTHER units' and
  the bootstrap interval of that ratio excludes 1: it is named, with the figure and the ratio.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .. import catalogue
from ..catalogue import Measure
from ..stats import LEVEL, N_BOOT
from .types.run_report import RunReport
from .types.units import UnitFigure, UnitGroup

OUTLIER_FRACTION = 0.10  # a unit this far off the others' median (and surely so) is named
MIN_SAMPLES = 2  # samples every unit ran, for any spread


def _matrix(report: RunReport, units: Sequence[str], m: Measure) -> np.ndarray:
    """(samples x units) of the measure's values, the samples every unit ran ok with a positive value."""
    rows = []
    for s in report.samples:
        cells = [s.cells.get(u) for u in units]
        if any(c is None or c.status != "ok" for c in cells):
            continue
        values = [getattr(c, m.name, None) for c in cells]
        if all(isinstance(v, (int, float)) and v > 0 for v in values):
            rows.append(values)
    return np.array(rows, dtype=float).reshape(-1, len(units))


def _cv(x: np.ndarray, axis: int) -> np.ndarray:
    return np.std(x, axis=axis, ddof=1) / np.mean(x, axis=axis)


def _others(levels: np.ndarray) -> np.ndarray:
    """Each unit's level over the median of the other units' levels (last axis: the units)."""
    k = levels.shape[-1]
    out = np.empty_like(levels)
    for u in range(k):
        out[..., u] = levels[..., u] / np.median(np.delete(levels, u, axis=-1), axis=-1)
    return out


def unit_figure(report: RunReport, units: Sequence[str], m: Measure, seed: int = 0) -> UnitFigure:
    x = _matrix(report, units, m)
    n = x.shape[0]
    if n < MIN_SAMPLES:
        return UnitFigure(m.name, m.label, m.higher_is_better, n, None, None, None)
    logs = np.log(x)
    centred = logs - logs.mean(axis=1, keepdims=True)  # each sample against its own mean over the units
    levels = np.exp(centred.mean(axis=0))
    within = float(np.median(_cv(np.exp(centred - centred.mean(axis=0)), axis=0)))
    draws = np.random.default_rng(seed).integers(0, n, size=(N_BOOT, n))
    boot = np.exp(centred[draws].mean(axis=1))  # (N_BOOT x units): the levels of each resample
    a = (1.0 - LEVEL) / 2.0
    cvs = _cv(boot, axis=1)
    lo, hi = np.quantile(cvs, [a, 1.0 - a])
    against, boot_against = _others(levels), _others(boot)
    tails = np.quantile(boot_against, [a, 1.0 - a], axis=0)
    return UnitFigure(
        m.name, m.label, m.higher_is_better, n, round(float(_cv(levels, axis=0)), 4),
        (round(float(lo), 4), round(float(hi), 4)), round(within, 4),
        {u: round(float(v), 4) for u, v in zip(units, levels, strict=True)},
        {u: (round(float(against[i]), 4), round(float(tails[0, i]), 4), round(float(tails[1, i]), 4))
         for i, u in enumerate(units)},
    )  # fmt: skip


def outliers(f: UnitFigure) -> list[str]:
    """The units that stand out on one figure, in words."""
    out = []
    for unit, (ratio, lo, hi) in f.against_others.items():
        if abs(ratio - 1.0) <= OUTLIER_FRACTION or lo <= 1.0 <= hi:
            continue
        worse = ratio < 1.0 if f.higher_is_better else ratio > 1.0
        how = ("uses more energy" if worse else "uses less energy") if f.field.startswith("energy") else (
            "slower" if worse else "faster")  # fmt: skip
        pct = abs(ratio - 1.0) * 100
        out.append(f"{unit} stands out on {f.label}: {ratio:.2f}x the other units' median (95% {lo:.2f}–{hi:.2f}), "
                   f"{pct:.0f}% {how}")  # fmt: skip
    return out


def unit_groups(groups: Mapping[str, Sequence[str]] | None, report: RunReport) -> tuple[UnitGroup, ...]:
    """run.json's `units` (group -> its devices) -> each group's figures and outliers."""
    out = []
    for name, members in (groups or {}).items():
        units = [str(u) for u in members if any(r.device == u for r in report.devices)]
        if len(units) < 2:
            continue
        figs = tuple(unit_figure(report, units, m) for m in catalogue.PAIRED)  # read now: register() rebinds it
        out.append(UnitGroup(name, tuple(units), figs, tuple(o for f in figs for o in outliers(f))))
    return tuple(out)


def units_table(group: UnitGroup) -> tuple[list[str], list[list[str]]]:
    """(headers, rows) of a group's table: a row per figure, the spreads, then each unit's level."""
    headers = ["Figure", "Samples", "Between-unit CV (95%)", "Within-unit CV", *group.units]

    def pct(v: float | None) -> str:
        return "–" if v is None else f"{100 * v:.1f}%"

    rows = []
    for f in group.figures:
        ci = f" ({pct(f.between_cv_ci[0])}–{pct(f.between_cv_ci[1])})" if f.between_cv_ci else ""
        rows.append([f.label, str(f.samples), pct(f.between_cv) + ci, pct(f.within_cv),
                     *(f"{f.levels[u]:.3f}" if u in f.levels else "–" for u in group.units)])  # fmt: skip
    return headers, rows


UNITS_NOTE = ("Each unit's level: its value relative to the group on the same samples (1.000 typical). "
              "Between-unit CV: the spread of the levels (95% bootstrap interval over the samples); within-unit "
              "CV: a unit's sample-to-sample scatter around its own level (docs/conditions.md).")  # fmt: skip
