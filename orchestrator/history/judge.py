"""Each run's figure judged against the spread BETWEEN the comparable runs before it (pure).

One run's intervals are over its own samples: they leave out what moves between runs (the host's
load, a phone's temperature, background work), so two identical runs differ "significantly" half the
time (issue 41). A run is judged instead, as asv and Bencher do, against a window of the device's
earlier comparable runs: their mean and the spread between them give a 99% prediction band for one
more run of the same kind (Student's t, which widens the band when few runs are known); a change is
a run outside that band and at least MIN_CHANGE away from the mean. Fewer than MIN_RUNS earlier runs:
"not enough runs to judge", never a change.

A run outside the band is confirmed by the next one: if that one stays beyond the band on the same
side, the level moved (a change at the first run, the window starts again there, and the runs after it
are judged against the new level); if it comes back, the first was an outlier: one noisy run gives
one mark, never two, and no run is judged against an outlier. Runs someone excluded (`history exclude`)
are shown but neither judged nor judged against.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import replace

from .types import Judgement, Point

MIN_RUNS = 3  # earlier comparable runs a judgement needs (fewer: "not enough runs to judge")
# The smallest change called, as a share of the usual level, however tight the spread (0.05 = 5%): a
# device whose runs agree to 0.5% still moves a few % with a software update nobody would act on. The
# one home of this threshold (docs/history.md "How big a change must be").
MIN_CHANGE = 0.05
BAND_LEVEL = 0.99  # the prediction band's coverage: one run in 100 of an unchanged device falls outside
# Student's t at 0.995 (two-sided 99%) for 2..30 degrees of freedom (published tables; checked against
# the t density integrated numerically in tests/unit/history/test_history_judge.py)
_T995 = (9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.250, 3.169, 3.106, 3.055, 3.012, 2.977, 2.947,
         2.921, 2.898, 2.878, 2.861, 2.845, 2.831, 2.819, 2.807, 2.797, 2.787, 2.779, 2.771, 2.763, 2.756,
         2.750)  # fmt: skip
_Z995 = 2.5758293035489


def t995(df: int) -> float:
    """Student's t quantile 0.995 for df >= 2 (beyond the table: Cornish-Fisher's expansion, < 1e-3 off)."""
    if df < 2:
        raise ValueError("a prediction band needs at least 2 degrees of freedom")
    if df - 2 < len(_T995):
        return _T995[df - 2]
    z = _Z995
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


# what a run's figure is, judged
FEW = "few"  # fewer than MIN_RUNS earlier comparable runs: not enough runs to judge
USUAL = "usual"  # inside the band of the runs before it
CHANGE = "change"  # outside the band and at least MIN_CHANGE away: the level moved here
OUTLIER = "outlier"  # outside the band, and the next run came back: one disturbed run
FOLLOWS = "follows"  # a run after a change, at the new level (not enough runs there yet)
EXCLUDED = "excluded"  # excluded by someone (`history exclude`): not judged, not judged against
STATES = (FEW, USUAL, CHANGE, OUTLIER, FOLLOWS, EXCLUDED)
JUDGED_AGAINST = (FEW, USUAL, CHANGE, FOLLOWS)  # the states of runs a later run may be judged against


def band(values: Sequence[float]) -> tuple[float, float, float]:
    """(mean, lo, hi): where one more run like `values` falls 99 times in 100, widened to MIN_CHANGE
    of the mean when the runs agree more tightly than that."""
    n = len(values)
    mean = statistics.fmean(values)
    half = t995(n - 1) * statistics.stdev(values) * math.sqrt(1 + 1 / n)
    half = max(half, MIN_CHANGE * abs(mean))
    return mean, mean - half, mean + half


def judge_figure(
    points: Sequence[Point],
    figure: str,
    higher_is_better: bool,
    window: int,
    excluded: Mapping[str, str] | None = None,
) -> tuple[Judgement | None, ...]:
    """Each point's judgement of `figure` (None where the run has no value), oldest first. `window`:
    at most this many earlier runs (of the current level) are judged against; `excluded`: run id -> why."""
    excluded = excluded or {}
    out: list[Judgement | None] = []
    level: list[float] = []  # the values of the current level, oldest first
    since = ""  # the run whose change the current level starts at ("": the series' start)
    pending: tuple[int, float, float, bool] | None = None  # a departure: (index in out, lo, hi, above)
    for p in points:
        f = p.figures.get(figure)
        value = None if f is None else f.value
        if p.run_id in excluded:
            out.append(Judgement(p.run_id, figure, EXCLUDED, value, 0, note=excluded[p.run_id]))
            continue
        if value is None:
            out.append(None)
            continue
        if pending is not None:
            at, plo, phi, above = pending
            first = out[at]
            assert first is not None
            pending = None
            if (value > phi) if above else (value < plo):  # still beyond the band, same side: it moved
                out[at] = replace(first, confirmed=True)
                level, since = [first.value, value], first.run_id
                out.append(Judgement(p.run_id, figure, FOLLOWS, value, 1, note=since))
                continue
            out[at] = replace(first, state=OUTLIER)  # it came back: judged on as if it never was
        base = level[-window:]
        if len(base) < MIN_RUNS:
            state = FOLLOWS if since else FEW
            out.append(Judgement(p.run_id, figure, state, value, len(base), note=since))
            level.append(value)
            continue
        mean, lo, hi = band(base)
        if lo <= value <= hi:
            out.append(Judgement(p.run_id, figure, USUAL, value, len(base), mean, lo, hi))
            level.append(value)
            continue
        above = value > hi
        worse = above != higher_is_better
        out.append(Judgement(p.run_id, figure, CHANGE, value, len(base), mean, lo, hi, worse))
        pending = (len(out) - 1, lo, hi, above)
    return tuple(out)
