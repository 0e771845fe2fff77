"""`edgefarm ab`'s figures (report/ab.py, stats.rounds_ratio_ci): blocks in ABBA order, each sample's
ratio taken within a round, the interval over the rounds, so a load that moves a whole block moves
the interval, not the verdict."""

from __future__ import annotations

import math
import random

import pytest

from android_runner.contract import SampleResult
from orchestrator.devices.types import DeviceInfo
from orchestrator.report.ab import FAMILY_LEVEL, ab_comparison, order, rounds_text
from orchestrator.report.combine import build_report, device_row, sample_rows
from orchestrator.report.paired import PAIRED_FIGURES
from orchestrator.run.run_json import RunJson
from orchestrator.run.types import DeviceOutcome
from orchestrator.stats import paired_ratio_ci, rounds_ratio_ci, t_quantile

RUN = {"run_id": "r", "model": {"sha256": "a"}, "dataset": {"sha256": "b"}}


def _block(tag: str, load: float, seed: int, n: int = 8):
    """One block: `n` samples whose times differ a lot between samples, all scaled by the block's
    `load` (what the machine was doing while it ran), with 1% noise per sample."""
    rng = random.Random(seed)
    base = random.Random(1)
    rows = [SampleResult(id=f"s{i}", status="ok", output="y", wall_ms=load * base.uniform(50, 500) * rng.uniform(0.99, 1.01))
            for i in range(n)]  # fmt: skip
    row = device_row(
        DeviceInfo.from_dict({"name": "pixel-8"}), DeviceOutcome(name="pixel-8", kind="adb"), rows, None
    )
    return build_report(
        RunJson.from_dict({**RUN, "run_id": tag}), [row], sample_rows({"pixel-8": (rows, None)})
    )


def _loads(rounds: int, seed: int, sd: float, hog_from: int) -> list[tuple[float, float]]:
    """Each round's (A's, B's) block load: a hog doubles it from round `hog_from` on, and every block
    carries its own lognormal jitter of `sd` (other jobs on a shared machine)."""
    rng = random.Random(seed)
    hog = [2.0 if r >= hog_from else 1.0 for r in range(rounds)]
    return [(h * math.exp(rng.gauss(0, sd)), h * math.exp(rng.gauss(0, sd))) for h in hog]


def _ab(loads, b_factor: float = 1.0):
    a = [_block(f"a{r}", la, 10 + r) for r, (la, _) in enumerate(loads)]
    b = [_block(f"b{r}", b_factor * lb, 20 + r) for r, (_, lb) in enumerate(loads)]
    return a, b


def test_blocks_alternate_abba():
    assert order(2) == ["a", "b", "b", "a"] and order(3)[4:] == ["a", "b"] and len(order(20)) == 40


def test_a_hog_and_block_to_block_load_give_no_significant_difference_where_a_sample_unit_would():
    """40 A/A comparisons, each with a hog from round 3 and 5% per-block jitter."""
    found_by_rounds, found_by_samples = [], 0
    for seed in range(40):
        loads = _loads(6, seed, 0.05, hog_from=3)
        a, b = _ab(loads)
        c, rounds = ab_comparison(a, b)
        wall = c.devices[0].paired.figure("wall_ms")
        assert len(rounds["pixel-8"]["wall_ms"]) == 6 and wall.pairs == 6 * 8
        if wall.significant:  # a 99% interval (95% over ab's figures at once): about 1 in 100, no more
            found_by_rounds.append((seed, wall))
        # the same figures with the sample as the unit (each sample's geometric mean over the rounds,
        # then a bootstrap over the 8 samples): the per-block loads, shared by a block's samples, do
        # not show in that interval, and it calls identical configurations different
        per_sample = [
            [math.exp(sum(math.log(x.samples[i].cells["pixel-8"].wall_ms) for x in side) / len(side)) for i in range(8)]
            for side in (a, b)
        ]  # fmt: skip
        r = paired_ratio_ci(*per_sample)
        found_by_samples += r.significant and abs(r.ratio - 1) > 0.02
    # measured: 0 of 40 by rounds (4 of 40 at 95% per figure), 19 of 40 with the sample as the unit
    assert len(found_by_rounds) <= 4 and found_by_samples >= 15, (found_by_rounds, found_by_samples)


def test_a_ten_percent_slower_b_is_found_under_the_same_load():
    a, b = _ab(_loads(6, 3, 0.02, hog_from=3), b_factor=1.1)
    c, rounds = ab_comparison(a, b)
    wall = c.devices[0].paired.figure("wall_ms")
    assert wall.significant and 1.02 < wall.lo < 1.1 < wall.hi < 1.2, wall
    assert c.common_samples == 8 and c.run_a == "A (6 blocks)" and c.devices[0].worse == 1
    (line,) = rounds_text(rounds)
    assert line.startswith("pixel-8: time per sample B/A by round ") and len(line.split()[-6:]) == 6


def test_t_quantile_is_exact_and_ab_tests_its_figures_at_a_family_level():
    for p, df, exact in ((0.975, 1, 12.7062), (0.995, 2, 9.9248), (0.995, 5, 4.0321), (0.999, 10, 4.1437)):
        assert t_quantile(p, df) == pytest.approx(exact, abs=1e-4)  # any t table
    assert FAMILY_LEVEL == pytest.approx(1 - 0.05 / len(PAIRED_FIGURES)) and len(PAIRED_FIGURES) >= 2
    with pytest.raises(ValueError, match="degree"):
        t_quantile(0.975, 0)


def test_rounds_ratio_ci_is_students_t_over_the_rounds():
    r = rounds_ratio_ci([([1.0, 2.0], [1.1, 2.2]), ([1.0, 2.0], [1.3, 2.6]), ([4.0], [None])])
    assert r.rounds == pytest.approx((1.1, 1.3)) and r.pairs == 4  # the third round has no pair
    half = 12.7062 * abs(math.log(1.3) - math.log(1.1)) / 2  # t(1 df) * sd / sqrt(2), sd = |d| / sqrt(2)
    mid = (math.log(1.1) + math.log(1.3)) / 2
    got = (math.log(r.lo), math.log(r.ratio), math.log(r.hi))
    assert got == pytest.approx((mid - half, mid, mid + half), rel=1e-5)
    one = rounds_ratio_ci([([1.0], [2.0])])
    assert one.ratio == pytest.approx(2.0) and one.lo is None and not one.significant
    assert rounds_ratio_ci([([1.0], [None])]) is None


def test_blocks_of_unequal_rounds_are_refused():
    a, b = _ab(_loads(2, 0, 0.0, hog_from=9))
    with pytest.raises(ValueError, match="2 blocks of A against 1 of B"):
        ab_comparison(a, b[:1])
