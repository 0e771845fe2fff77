"""Judging a run against the spread between the comparable runs before it (history/judge.py), on
synthetic series: identical runs (some disturbed) call nothing, a step is called where it starts and
only there, one outlier is one mark, too few runs are never judged."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from orchestrator.history.judge import (
    CHANGE,
    EXCLUDED,
    FEW,
    FOLLOWS,
    MIN_CHANGE,
    MIN_RUNS,
    OUTLIER,
    USUAL,
    band,
    judge_figure,
    t995,
)
from orchestrator.history.types import Figure, Point


def points(values):
    return [Point(f"r{i + 1}", f"2026-01-01T00:00:{i:02d}", "", "", "", "", "", "", "", "cpu",
                  {} if v is None else {"sample_ms_p50": Figure(v)}) for i, v in enumerate(values)]  # fmt: skip


def states(values, window=10, excluded=None, higher=False):
    js = judge_figure(points(values), "sample_ms_p50", higher, window, excluded)
    return [None if j is None else j.state for j in js], js


def noisy(n, level=1000.0, sd=0.02, seed=1):
    rng = random.Random(seed)
    return [level * (1 + rng.gauss(0, sd)) for _ in range(n)]


@pytest.mark.parametrize("seed", range(20))
def test_ten_identical_runs_some_under_a_cpu_hog_call_no_change(seed):
    values = noisy(10, seed=seed)
    values[3] *= 1.6  # a CPU hog during the 4th and 8th runs
    values[7] *= 1.9
    got, js = states(values)
    assert CHANGE not in got, (got, values)
    assert got[:MIN_RUNS] == [FEW] * MIN_RUNS
    assert got[3] == OUTLIER and got[7] == OUTLIER  # each disturbed run one mark, the run after it none
    assert got[4] == USUAL and got[8] == USUAL
    assert js[3].worse is True and js[3].runs == 3


@pytest.mark.parametrize("seed", range(20))
def test_a_1_3x_slowdown_from_run_6_is_called_at_run_6_only(seed):
    values = noisy(5, seed=seed) + noisy(5, level=1300.0, seed=seed + 100)
    got, js = states(values)
    assert got == [FEW, FEW, FEW, USUAL, USUAL, CHANGE, FOLLOWS, FOLLOWS, USUAL, USUAL], got
    six = js[5]
    assert six.worse is True and six.confirmed is True and six.runs == 5 and 1.2 < six.ratio < 1.4
    assert six.lo < six.mean < six.hi < six.value
    assert js[6].note == "r6" and js[8].runs == 3  # judged against the new level from the third run on


def test_three_identical_runs_with_a_hog_on_the_second_are_not_judged():
    got, js = states([1000.0, 1700.0, 1010.0])
    assert got == [FEW, FEW, FEW] and [j.runs for j in js] == [0, 1, 2]


@pytest.mark.parametrize("seed", range(10))
def test_a_real_2x_slowdown_over_five_runs_is_called_where_it_starts(seed):
    got, js = states(noisy(3, seed=seed) + noisy(2, level=2000.0, seed=seed + 50))
    assert got == [FEW, FEW, FEW, CHANGE, FOLLOWS] and js[3].confirmed is True and js[3].worse


def test_a_run_known_disturbed_is_excluded_and_the_slowdown_after_it_still_called():
    values = [1000.0, 1700.0, 1010.0, 990.0, 2000.0, 2020.0]
    got, js = states(values, excluded={"r2": "CPU hog"})
    assert got == [FEW, EXCLUDED, FEW, FEW, CHANGE, FOLLOWS] and js[1].note == "CPU hog"
    assert js[3].runs == 2  # r2 not counted
    assert js[4].runs == 3 and js[4].mean == pytest.approx(1000.0)


def test_the_latest_run_outside_the_band_is_a_change_not_yet_confirmed():
    got, js = states(noisy(6) + [1500.0])
    assert got[-1] == CHANGE and js[-1].confirmed is None


def test_an_improvement_is_a_change_the_right_way():
    got, js = states(noisy(5) + [700.0, 705.0])
    assert got[5] == CHANGE and js[5].worse is False
    got, js = states(noisy(5, level=20.0) + [30.0, 30.0], higher=True)  # a speed: higher is better
    assert got[5] == CHANGE and js[5].worse is False


def test_inside_the_usual_spread_and_below_the_floor_nothing_is_called():
    tight = [1000.0, 1001.0, 999.0, 1000.5, 1000.0]
    got, js = states(tight + [1000 * (1 + MIN_CHANGE * 0.8)])  # beyond the tiny spread, under the floor
    assert got[-1] == USUAL
    assert js[-1].hi == pytest.approx(js[-1].mean * (1 + MIN_CHANGE))
    got, _ = states(tight + [1000 * (1 + MIN_CHANGE * 1.3)] * 2)
    assert got[5] == CHANGE
    wide = [1000.0, 1150.0, 880.0, 1100.0, 950.0]  # runs that scatter 11%: a 20% move is inside
    assert states(wide + [1200.0])[0][-1] == USUAL


def test_the_window_limits_the_runs_judged_against_and_missing_values_are_skipped():
    got, js = states(noisy(12) + [None, 1005.0], window=4)
    assert got[-2] is None and js[-1].state == USUAL and js[-1].runs == 4


def test_the_band_widens_with_fewer_runs():
    few, many = band([990.0, 1000.0, 1010.0]), band([990.0, 1000.0, 1010.0] * 4)
    assert few[2] - few[1] > 2 * (many[2] - many[1])


def _t_cdf(t: float, df: int) -> float:
    """P(T <= t) for Student's t, by integrating its density (trapezoid, fine grid)."""
    xs = np.linspace(0.0, t, 400_001)
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    ys = c * (1 + xs**2 / df) ** (-(df + 1) / 2)
    return 0.5 + float(np.sum((ys[1:] + ys[:-1]) / 2 * np.diff(xs)))


@pytest.mark.parametrize("df", [2, 3, 4, 5, 9, 15, 30, 31, 60, 99])
def test_the_t_quantile_is_student_s(df):
    assert _t_cdf(t995(df), df) == pytest.approx(0.995, abs=2e-5)


def test_a_pass_rate_that_was_0_every_run_is_called_when_it_moves_and_said_without_a_ratio():
    from orchestrator.history.regress import changes

    ps = [Point(f"r{i + 1}", "", "", "", "", "", "", "", "", "cpu", {"pass_rate_pct": Figure(v)})
          for i, v in enumerate([0.0, 0.0, 0.0, 0.0, 25.0])]  # fmt: skip
    js = judge_figure(ps, "pass_rate_pct", True, 10)
    assert [j.state for j in js] == [FEW, FEW, FEW, USUAL, CHANGE] and js[-1].worse is False
    (c,) = changes("d", ps, {"pass_rate_pct": js})
    assert "25.0 %, against 0 for the mean of the 4 comparable runs before it (0 %;" in c.text(), c.text()
