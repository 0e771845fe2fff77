"""B against A on the same samples (report/paired.py): verdict flips with McNemar's test and each
catalogue measure as a paired ratio."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PairedFigure:
    """B against A on the samples both ran ok: the geometric mean of the per-sample ratios B/A with
    its 95% bootstrap interval (stats.paired_ratio_ci)."""

    field: str  # SampleCell field: ttft_ms, decode_tps, wall_ms, energy_j...
    label: str
    higher_is_better: bool
    ratio: float | None
    lo: float | None
    hi: float | None
    pairs: int
    significant: bool  # the interval excludes 1 and the ratio is beyond the noise threshold


@dataclass(frozen=True)
class Paired:
    """Device (or run) B against A on the same samples: verdict flips with an exact McNemar test,
    and each figure as a paired ratio."""

    a: str
    b: str
    common: int  # samples scored on both
    a_only: int  # passed on A, failed on B
    b_only: int  # failed on A, passed on B
    p_value: float  # exact McNemar on (a_only, b_only)
    figures: tuple[PairedFigure, ...] = ()
    strict_a_only: int = 0  # the same flips by the strict content check
    strict_b_only: int = 0
    strict_p_value: float = 1.0

    def figure(self, field: str) -> PairedFigure | None:
        return next((f for f in self.figures if f.field == field), None)
