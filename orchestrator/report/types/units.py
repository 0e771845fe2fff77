"""`--units` (report/units.py): identical devices compared unit against unit."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class UnitFigure:
    """--units: one figure over a group of identical devices (report/units.py). Each unit's `level` is
    its value relative to the group on the same samples (geometric mean over the samples of its value /
    the samples' geometric mean over the units; 1.0: typical). `between_cv`: the coefficient of variation
    of the levels (the unit-to-unit spread) with its 95% bootstrap interval over the samples;
    `within_cv`: the median over units of a unit's sample-to-sample scatter around its own level."""

    field: str  # the measure (catalogue): wall_ms, ttft_ms, prefill_tps, decode_tps, energy_j
    label: str
    higher_is_better: bool
    samples: int  # samples every unit ran ok with a value
    between_cv: float | None
    between_cv_ci: tuple[float, float] | None
    within_cv: float | None
    levels: Mapping[str, float] = field(default_factory=dict)  # unit -> its level
    # unit -> its level against the median of the OTHER units, with that ratio's 95% interval
    against_others: Mapping[str, tuple[float, float, float]] = field(default_factory=dict)


@dataclass(frozen=True)
class UnitGroup:
    """--units: a group of identical devices that each ran every sample, its figures and its outliers
    (a unit over OUTLIER_FRACTION off the other units' median on a figure, the interval excluding 1)."""

    name: str
    units: tuple[str, ...]
    figures: tuple[UnitFigure, ...] = ()
    outliers: tuple[str, ...] = ()  # in words, each naming the unit
