"""orchestrator/stats.py against reference values: scipy's (computed by scripts/stats_references.py into
fixtures/stats_references.json, on the same seeded inputs) and textbook examples."""

from __future__ import annotations

import importlib.util
import json
import math
import random
from pathlib import Path

import numpy as np
import pytest

from orchestrator import stats

REPO = Path(__file__).resolve().parents[2]
REFS = json.loads((REPO / "tests/unit/fixtures/stats_references.json").read_text())
_spec = importlib.util.spec_from_file_location("stats_references", REPO / "scripts/stats_references.py")
INPUTS = importlib.util.module_from_spec(_spec)  # the reference script's inputs (its scipy import is lazy)
_spec.loader.exec_module(INPUTS)


@pytest.mark.parametrize("k,n", INPUTS.WILSON)
def test_wilson_matches_scipy(k, n):
    ref_lo, ref_hi = REFS["wilson"][f"{k}/{n}"]
    lo, hi = stats.wilson_interval(k, n)
    assert lo == pytest.approx(ref_lo, abs=1e-9)
    assert hi == pytest.approx(ref_hi, abs=1e-9)


def test_wilson_textbook_value():
    # Newcombe (1998), Table I: 81/263 -> 0.2553 to 0.3662 (Wilson, no continuity correction)
    lo, hi = stats.wilson_interval(81, 263)
    assert (round(lo, 4), round(hi, 4)) == (0.2553, 0.3662)
    assert stats.wilson_interval(0, 0) is None
    with pytest.raises(ValueError):
        stats.wilson_interval(3, 2)


@pytest.mark.parametrize("b,c", INPUTS.MCNEMAR)
def test_mcnemar_matches_scipy_binomial(b, c):
    ref = REFS["mcnemar"][f"{b},{c}"]
    assert stats.mcnemar_exact(b, c) == pytest.approx(ref, rel=1e-12)


def test_mcnemar_known_values():
    # 8 flips one way, none the other: p = 2 / 2**8
    assert stats.mcnemar_exact(8, 0) == pytest.approx(2 / 256)
    assert stats.mcnemar_exact(4, 4) == 1.0  # symmetric: capped at 1
    assert stats.mcnemar_exact(8, 0) < stats.ALPHA < stats.mcnemar_exact(4, 1)


def test_bootstrap_mean_close_to_scipy_percentile_bootstrap():
    xs = INPUTS.mean_sample()
    lo, hi = stats.bootstrap_ci(xs, stats.mean, n=4000)
    ref_lo, ref_hi = REFS["bootstrap_mean"]
    width = ref_hi - ref_lo
    assert lo == pytest.approx(ref_lo, abs=0.08 * width)
    assert hi == pytest.approx(ref_hi, abs=0.08 * width)
    # and against the normal theory interval of a mean: mean +- 1.96 s / sqrt(n)
    m, s = stats.mean(xs), math.sqrt(sum((x - stats.mean(xs)) ** 2 for x in xs) / (len(xs) - 1))
    half = 1.96 * s / math.sqrt(len(xs))
    assert lo == pytest.approx(m - half, abs=0.1 * half) and hi == pytest.approx(m + half, abs=0.1 * half)


def test_bootstrap_median_close_to_scipy():
    xs = INPUTS.median_sample()
    lo, hi = stats.bootstrap_ci(xs, stats.percentile_stat(50), n=4000)
    ref_lo, ref_hi = REFS["bootstrap_median"]
    width = ref_hi - ref_lo
    assert lo == pytest.approx(ref_lo, abs=0.15 * width) and hi == pytest.approx(ref_hi, abs=0.15 * width)
    assert lo < stats.median(xs) < hi


def test_bootstrap_is_seeded_and_needs_two_values():
    xs = [1.0, 2.0, 3.0, 10.0]
    assert stats.bootstrap_ci(xs, stats.mean) == stats.bootstrap_ci(xs, stats.mean)
    assert stats.bootstrap_ci([5.0], stats.mean) is None
    assert stats.bootstrap_ci([], stats.mean) is None
    assert stats.bootstrap_ci([4.0, 4.0, 4.0], stats.mean) == (4.0, 4.0)


def test_group_bootstrap_is_wider_than_treating_repeats_as_independent():
    # 20 prompts whose latency differs a lot between prompts, 5 near-identical repeats each:
    # resampling whole prompts gives the honest (wider) interval
    rng = random.Random(1)
    groups = []
    for _ in range(20):
        base = rng.uniform(50, 150)
        groups.append([base + rng.gauss(0, 0.5) for _ in range(5)])
    flat = [v for g in groups for v in g]
    lo_f, hi_f = stats.bootstrap_ci(flat, stats.mean)
    lo_g, hi_g = stats.bootstrap_ci_groups(groups, stats.mean)
    assert (hi_g - lo_g) > 1.8 * (hi_f - lo_f)
    assert stats.bootstrap_ci_groups([[1.0, 2.0]], stats.mean) is None


def test_paired_ratio_finds_a_known_factor():
    rng = random.Random(5)
    a = [rng.uniform(80, 120) for _ in range(40)]
    b = [x * 2.0 * rng.uniform(0.98, 1.02) for x in a]
    r = stats.paired_ratio_ci(a, b)
    assert r.ratio == pytest.approx(2.0, rel=0.01)
    assert r.lo < 2.0 < r.hi and r.lo > 1.9 and r.significant and r.pairs == 40


def test_paired_ratio_of_identical_devices_holds_one():
    rng = random.Random(9)
    a = [rng.uniform(80, 120) for _ in range(40)]
    b = [x * rng.uniform(0.95, 1.05) for x in a]
    r = stats.paired_ratio_ci(a, b)
    assert r.lo < 1.0 < r.hi and not r.significant


def test_paired_ratio_skips_missing_pairs_and_checks_lengths():
    r = stats.paired_ratio_ci([10.0, None, 0.0, 10.0], [20.0, 5.0, 3.0, 20.0])
    assert r.pairs == 2 and r.ratio == pytest.approx(2.0)
    assert stats.paired_ratio_ci([None], [1.0]) is None
    one = stats.paired_ratio_ci([2.0], [3.0])
    assert one.ratio == pytest.approx(1.5) and one.lo is None and not one.significant
    with pytest.raises(ValueError):
        stats.paired_ratio_ci([1.0], [1.0, 2.0])
    # the log-ratio mean equals the log of the scipy geometric mean of the ratios
    a, b = [1.0, 2.0, 4.0], [3.0, 2.0, 1.0]
    assert stats.paired_ratio_ci(a, b).ratio == pytest.approx(REFS["gmean_3_1_quarter"])


def test_percentile_rows_is_numpys_percentile_bit_for_bit():
    # one sort of the rows instead of numpy's partition per row: the same floats, ties and NaN cells
    # (a resample of groups of unequal size) included, at the ends and in between
    rng = np.random.default_rng(3)
    for trial in range(60):
        m = rng.lognormal(2, 1, size=(int(rng.integers(1, 40)), int(rng.integers(1, 120))))
        if trial % 3 == 0:
            m = np.round(m, 1)
        if trial % 2:
            m[rng.random(m.shape) < 0.3] = np.nan
            m[:, 0] = np.where(np.isnan(m[:, 0]), 1.0, m[:, 0])
        for q in (0, 1, 10, 33.3, 50, 90, 99, 100):
            ref = np.nanpercentile(m, q, axis=1) if trial % 2 else np.percentile(m, q, axis=1)
            assert np.array_equal(stats.percentile_rows(m, q), ref), (trial, q)
    assert np.isnan(stats.percentile_rows(np.full((1, 3), np.nan), 50)).all()


def test_shared_resamples_give_the_intervals_of_fresh_draws():
    rng = random.Random(4)
    xs, ys = [rng.uniform(1, 9) for _ in range(50)], [rng.uniform(1, 9) for _ in range(50)]
    groups = [[x, x + rng.uniform(0, 1)] for x in xs]
    draws = stats.Resamples()
    for stat in (stats.median, stats.percentile_stat(90), stats.mean):
        assert stats.bootstrap_ci(xs, stat, draws=draws) == stats.bootstrap_ci(xs, stat)
        assert stats.bootstrap_ci(ys, stat, draws=draws) == stats.bootstrap_ci(ys, stat)
        assert stats.bootstrap_ci_groups(groups, stat, draws=draws) == stats.bootstrap_ci_groups(groups, stat)
    assert stats.paired_ratio_ci(xs, ys, draws=draws) == stats.paired_ratio_ci(xs, ys)
    assert stats.bootstrap_ci(xs[:7], stats.mean, draws=draws) == stats.bootstrap_ci(xs[:7], stats.mean)


def test_percentiles_counted_from_the_draws_are_numpys_percentiles_of_the_resamples():
    # a resample's percentile read from how often each value is drawn in it, without building it
    rng = np.random.default_rng(8)
    for k in (2, 3, 17, 200):
        xs = np.round(rng.lognormal(3, 0.5, k), 0 if k == 17 else 3)  # k == 17: many ties
        draws = stats.Resamples()
        (idx,) = draws.indices(k, stats.BLOCK_CELLS // k)
        for q in (0, 2.5, 50, 90, 99.9, 100):
            got = stats.percentile_stat(q).by_counts(xs, draws.counts(k))
            assert np.array_equal(got, np.percentile(xs[idx], q, axis=1)), (k, q)
    assert stats.Resamples().counts(stats.BLOCK_CELLS) is None  # a draw too big to keep: resampled per figure


def test_median_order_ci_ranks_are_the_binomial_table_s():
    # 95%: n=10 -> ranks 2 and 9 (P(B<=1) = 11/1024 <= 0.025 < P(B<=2) = 56/1024); n=6 -> 1 and 6
    # (P(B=0) = 1/64); n=5 has none (1/32 > 0.025)
    assert stats.median_order_ci(list(range(10, 0, -1))) == (2.0, 9.0)
    assert stats.median_order_ci([3, 1, 2, 6, 5, 4]) == (1.0, 6.0)
    assert stats.median_order_ci([1, 2, 3, 4, 5]) is None


def test_median_order_ci_covers_the_median_at_least_as_often_as_it_says():
    rng = random.Random(7)
    hits = 0
    for _ in range(400):
        lo, hi = stats.median_order_ci([rng.expovariate(1.0) for _ in range(41)])
        hits += lo <= math.log(2) <= hi  # the exponential's median
    assert hits / 400 >= 0.93  # exact coverage 0.972 at n=41 (ranks 14, 28); 400 draws vary by ~0.8%
