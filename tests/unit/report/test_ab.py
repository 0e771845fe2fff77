"""`edgefarm ab`'s figures (report/ab.py, stats.rounds_ratio_ci): blocks in ABBA order, each sample's
ratio taken within a round, the interval over the rounds, so a load that moves a whole block moves
the interval, not the verdict."""

from __future__ import annotations

import json
import math
import random
from dataclasses import replace

import pytest

from android_runner.contract import SampleResult, Settle
from orchestrator.devices.types import DeviceInfo
from orchestrator.farm.run_json import RunJson
from orchestrator.farm.types import DeviceOutcome
from orchestrator.report.ab import (
    FAMILY_LEVEL,
    MAX_ROUNDS,
    RESOLVE_FROM_ROUNDS,
    Block,
    ab_comparison,
    block_value,
    order,
    resolution,
    rounds_text,
    should_stop,
    widest_resolution,
)
from orchestrator.report.combine import build_report, device_row, sample_rows
from orchestrator.report.compare_out import to_json, to_markdown
from orchestrator.report.paired import PAIRED_FIGURES
from orchestrator.run.ab_length import MOST_REPEAT, block_length
from orchestrator.stats import Ratio, paired_ratio_ci, rounds_ratio_ci, t_quantile

RUN = {"run_id": "r", "model": {"sha256": "a"}, "dataset": {"sha256": "b"}}


def _block(
    tag: str, load: float, seed: int, n: int = 8, runs: int = 1, burst: float = 0.0, settle: Settle | None = None
) -> Block:
    """One block: `n` samples whose times differ a lot between samples, all scaled by the block's
    `load` (what the machine was doing while it ran), with 1% noise per run; each sample run `runs`
    times (--repeat), each run hit with probability `burst` by another job's burst (2x to 4x)."""
    rng = random.Random(seed)
    base = random.Random(1)
    means = [base.uniform(50, 500) for _ in range(n)]

    def one(i: int, k: int) -> SampleResult:
        hit = rng.uniform(2, 4) if rng.random() < burst else 1.0
        wall = load * means[i] * rng.uniform(0.99, 1.01) * hit
        return SampleResult(id=f"s{i}" + (f"@r{k}" if k > 1 else ""), status="ok", output="y", wall_ms=wall)

    each = {f"s{i}": tuple(one(i, k) for k in range(1, runs + 1)) for i in range(n)}
    rows = [rs[0] for rs in each.values()]
    row = device_row(
        DeviceInfo.from_dict({"name": "pixel-8"}), DeviceOutcome(name="pixel-8", kind="adb"), rows, None
    )
    if settle is not None:  # --settle's gate before the block (report/build.py reads it from the rows)
        row = replace(row, settle=(settle,))
    report = build_report(
        RunJson.from_dict({**RUN, "run_id": tag}), [row], sample_rows({"pixel-8": (rows, None)})
    )
    return Block(report, {"pixel-8": each})


def _loads(rounds: int, seed: int, sd: float, hog_from: int) -> list[tuple[float, float]]:
    """Each round's (A's, B's) block load: a hog doubles it from round `hog_from` on, and every block
    carries its own lognormal jitter of `sd` (other jobs on a shared machine)."""
    rng = random.Random(seed)
    hog = [2.0 if r >= hog_from else 1.0 for r in range(rounds)]
    return [(h * math.exp(rng.gauss(0, sd)), h * math.exp(rng.gauss(0, sd))) for h in hog]


def _ab(loads, b_factor: float = 1.0, **block):
    a = [_block(f"a{r}", la, 10 + r, **block) for r, (la, _) in enumerate(loads)]
    b = [_block(f"b{r}", b_factor * lb, 20 + r, **block) for r, (_, lb) in enumerate(loads)]
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
        assert len(rounds["pixel-8"]["wall_ms"].rounds) == 6 and wall.pairs == 6 * 8
        if wall.significant:  # a 99% interval (95% over ab's figures at once): about 1 in 100, no more
            found_by_rounds.append((seed, wall))
        # the same figures with the sample as the unit (each sample's geometric mean over the rounds,
        # then a bootstrap over the 8 samples): the per-block loads, shared by a block's samples, do
        # not show in that interval, and it calls identical configurations different
        per_sample = [
            [math.exp(sum(math.log(x.report.samples[i].cells["pixel-8"].wall_ms) for x in side) / len(side)) for i in range(8)]
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
    assert line.startswith("pixel-8: time per sample B/A by round ")
    by_round, _, resolves = line.partition("; ")
    assert len(by_round.split()[-6:]) == 6 and all(float(x) > 0 for x in by_round.split()[-6:])
    half = 100 * ((wall.hi / wall.lo) ** 0.5 - 1)  # what the run could tell from no change
    assert resolves == f"resolves ±{half:.1f}% (half the interval)" and 0 < half < 10
    assert resolution(rounds["pixel-8"]["wall_ms"]) == pytest.approx(half / 100, abs=1e-3)


def test_a_sample_run_many_times_in_a_block_counts_as_the_median_of_its_runs():
    """Bursts of other jobs hit one run in five (2-4x): one run per block hides a 10% slower B, 20 runs
    per block (their median) find it, and the run says how small a change it could resolve."""
    loads = _loads(6, 5, 0.02, hog_from=9)
    one, many = (ab_comparison(*_ab(loads, 1.1, runs=k, burst=0.2))[0] for k in (1, 20))
    f1, f20 = (c.devices[0].paired.figure("wall_ms") for c in (one, many))
    assert not f1.significant and f20.significant and 1.0 < f20.lo < 1.1 < f20.hi, (f1, f20)
    assert f20.pairs == 6 * 8  # a pair is a sample in a round, whatever its runs
    cell = many.devices[0]
    assert cell.worse == 1
    bad = SampleResult(id="s0@r2", status="crash", wall_ms=1.0)
    runs = [SampleResult(id="s0", status="ok", wall_ms=x) for x in (10.0, 30.0, 11.0)]
    assert block_value([*runs, bad], "wall_ms") == 11.0 and block_value([bad], "wall_ms") is None
    assert block_value([SampleResult(id="s0", status="ok", decode_tps=0.0)], "decode_tps") is None


def _timed(walls_ms: dict[str, list[float]]) -> Block:
    """A warm-up block: per device, its samples' first-run wall times."""
    runs = {d: {f"s{i}": (SampleResult(id=f"s{i}", status="ok", wall_ms=w),) for i, w in enumerate(ws)}
            for d, ws in walls_ms.items()}  # fmt: skip
    return Block(_block("w", 1.0, 0).report, runs)


def test_the_block_length_comes_from_the_shortest_pass_of_the_warm_ups():
    warm = [
        _timed({"pixel-8": [500.0] * 8, "cpu-a": [25.0] * 8}),
        _timed({"pixel-8": [400.0] * 8, "cpu-a": [30.0] * 8}),
    ]
    got = block_length(warm, 2.0)  # cpu-a's pass of A: 0.2 s -> 10 passes make 2 s
    assert (got.repeat, got.pass_s, got.samples, got.capped) == (10, 0.2, 8, "")
    assert (
        got.text(2.0)
        == "each block runs its 8 sample(s) 10 time(s) (--repeat 10): about 2.0 s per device by the warm-up blocks, --block-s 2"
    )
    assert block_length(warm, 0.01).repeat == 1  # a pass longer than asked: one
    capped = block_length(warm, 600.0)  # 3000 passes asked, run takes 1000
    assert capped.repeat == MOST_REPEAT == 1000 and "--repeat 1000 at most" in capped.capped
    failed = Block(warm[0].report, {"cpu-a": {"s0": (SampleResult(id="s0", status="crash"),)}})
    assert block_length([failed], 2.0) is None


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


def test_resolve_stops_on_the_intervals_width_after_whole_pairs_of_rounds():
    narrow, wide = Ratio(1.0, 0.97, 1.03, 8), Ratio(1.0, 0.8, 1.25, 8)
    both = {"cpu-a": {"wall_ms": narrow}, "pixel-8": {"wall_ms": wide}}
    assert widest_resolution(both) == pytest.approx(0.25) and resolution(narrow) == pytest.approx(
        0.03, abs=1e-3
    )
    assert should_stop(4, {"cpu-a": {"wall_ms": narrow}}, 0.05)  # every device within ±5%
    assert not should_stop(4, both, 0.05)  # one device is not
    assert not should_stop(5, {"cpu-a": {"wall_ms": narrow}}, 0.05)  # half an ABBA pair
    assert not should_stop(2, {"cpu-a": {"wall_ms": narrow}}, 0.05)  # before RESOLVE_FROM_ROUNDS
    assert not should_stop(6, {"cpu-a": {"wall_ms": narrow}}, None)  # no --resolve: every round runs
    assert not should_stop(6, {"cpu-a": {"wall_ms": Ratio(1.0, None, None, 1)}}, 0.05)
    assert RESOLVE_FROM_ROUNDS == 4 and MAX_ROUNDS == 100


def test_the_markdown_title_says_which_interval_the_brackets_are():
    c, _ = ab_comparison(*_ab(_loads(4, 1, 0.02, hog_from=9)))
    assert "ratios B/A (95% interval)." in to_markdown(c)  # compare's bootstrap
    ab_title = to_markdown(c, "note", f"{100 * FAMILY_LEVEL:.0f}% interval each")
    assert "ratios B/A (99% interval each)." in ab_title and ab_title.rstrip().endswith("note")


def test_blocks_that_did_not_settle_are_counted_per_side_and_said_in_every_format():
    """Issue 45: ab settles each block by default; a block whose device never settled (the gate's maximum
    wait passed) is counted on its side, with its round and device, in the comparison's conditions, which
    the terminal, md and json print; blocks without a sensor to gate on are said too."""
    moving = Settle(False, 600.0, 2.0, 60.0, 600.0, span_c=3.4)
    calm = Settle(True, 12.0, 2.0, 60.0, 600.0, span_c=0.4)
    a = [_block(f"a{r}", 1.0, 10 + r, settle=moving if r in (0, 2) else calm) for r in range(4)]
    b = [_block(f"b{r}", 1.0, 20 + r, settle=calm) for r in range(4)]
    c, _ = ab_comparison(a, b)
    said = ("UNSETTLED blocks (--settle reached its maximum wait: measured while a device's temperature still moved): "
            "A 2 of 4 (round 1: pixel-8 still 3.4 °C over 60 s; round 3: pixel-8 still 3.4 °C over 60 s), B 0 of 4")  # fmt: skip
    assert c.conditions == (said,)
    assert f"**Conditions:** {c.conditions[0]}" in to_markdown(c)
    assert json.loads(to_json(c))["conditions"] == list(c.conditions)
    flipped, _ = ab_comparison(b, a)  # the same blocks on the other side
    assert "A 0 of 4, B 2 of 4 (round 1: pixel-8" in flipped.conditions[0]
    settled, _ = ab_comparison(b, b)
    assert settled.conditions == ()  # every block settled: nothing to say
    none = Settle(None, 0.0, 2.0, 60.0, 600.0)
    ungated, _ = ab_comparison([_block("a", 1.0, 1, settle=none)] * 2, [_block("b", 1.0, 2, settle=none)] * 2)
    assert ungated.conditions == ("settle not applied (no temperature sensor readable): pixel-8 in 4 of 4 blocks",)
    plain, _ = ab_comparison([_block("a", 1.0, 1)] * 2, [_block("b", 1.0, 2)] * 2)  # --no-settle
    assert plain.conditions == ()
