"""`edgefarm ab`'s figures (pure): configuration B against A, measured in alternating blocks on the
same devices, so the machine's drift between blocks cancels.

A round is one block of A and one of B back to back, in ABBA order (A B, then B A, ...), so the two
blocks of a round are neighbours in time and share the machine's load, and a steady drift also
cancels over two rounds. Each sample's ratio B/A is taken within a round, between those neighbouring
blocks; a round's ratio is the geometric mean of its samples', and the figure's ratio the geometric
mean of the rounds' with Student's t interval over the rounds (stats.rounds_ratio_ci), at a level that
holds for all its figures at once (FAMILY_LEVEL). The unit is
the round because the samples of one block share its load: an interval over samples (as `compare`'s)
is too narrow once the load differs between blocks, which is what a drift is. Verdict flips come from
the first round (answers do not depend on the load). The result is a `Comparison`, so the same
printers and --fail-on gate serve `compare` and `ab` (compare_out.py).

A block may run each sample several times (run's --repeat, which ab sets from --block-s: ab_length.py):
a sample's figure in a block is then the median of its runs there (BLOCK_STATISTIC), so the block's
whole measured time averages the load it met and one run hit by another job's burst moves nothing."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from android_runner.contract import SampleResult

from ..catalogue import MEASURE
from ..stats import Ratio, rounds_ratio_ci
from .compare import Comparison, DeviceDelta
from .paired import PAIRED_FIGURES, pair, paired_figure
from .types.run_report import RunReport
from .types.sample_row import SampleCell

MAX_ROUNDS = 100  # 200 blocks: about 20 minutes of the tiny model's blocks on this host, hours on a phone
MIN_ROUNDS = 2  # an interval over the rounds needs two of them
# --resolve: checked after whole pairs of rounds (ABBA cancels a steady trend over two), from four on (3
# degrees of freedom: a width estimated from fewer rounds is too unsure to stop on)
RESOLVE_FROM_ROUNDS = 4
# Every figure's interval at 1 - 5%/k (Bonferroni over the k figures ab tests): --fail-on fails when ANY
# figure is significantly worse, so at 95% each, two identical configurations failed the gate far more
# often than 5% of the time (issue 36 lab: decode 0.78x (0.61-0.999) between identical blocks).
FAMILY_LEVEL = 1 - 0.05 / len(PAIRED_FIGURES)


# a sample's figure in a block of several runs of it. Measured on 12 A/A rounds of 40 runs per block
# (docs/benchmarks/ab.md): the rounds' spread with the mean, geometric mean and median of the runs agreed
# within 10% (0.16-0.17 on a busy machine), the minimum's was wider (0.175-0.21); the median is kept as the
# one a single stalled run (swap, a descheduled thread: seconds where the others take milliseconds) cannot move
BLOCK_STATISTIC = statistics.median


@dataclass(frozen=True)
class Block:
    """One block of ab: its run's combined report (answers, verdicts) and, per device and sample id,
    every measured run of the sample in the block (build.measured_runs: the first, then --repeat's)."""

    report: RunReport
    runs: Mapping[str, Mapping[str, tuple[SampleResult, ...]]]


def order(rounds: int) -> list[str]:
    """The blocks' configurations in run order: AB BA AB BA ... (`rounds` rounds)."""
    return [x for r in range(rounds) for x in (("a", "b") if r % 2 == 0 else ("b", "a"))]


def _cells(run: RunReport, device: str) -> dict[str, SampleCell]:
    return {s.id: s.cells[device] for s in run.samples if device in s.cells}


def block_value(runs: Sequence[SampleResult], field: str) -> float | None:
    """A sample's figure in one block: BLOCK_STATISTIC of its ok runs' values (None: no run counts)."""
    m = MEASURE[field]
    values = [v for r in runs if r.status == "ok" and (v := m.value(r)) is not None and v > 0]
    return BLOCK_STATISTIC(values) if values else None


def _device(name: str, a: Sequence[Block], b: Sequence[Block]) -> tuple[DeviceDelta, dict[str, Ratio], int]:
    """One device's row, each figure's ratio over the rounds (with its per-round ratios) and the number
    of samples every block ran."""
    blocks = [(_cells(x.report, name), _cells(y.report, name)) for x, y in zip(a, b, strict=True)]
    ids = [i for i in blocks[0][0] if all(i in ca and i in cb for ca, cb in blocks)]
    first_a, first_b = ({i: c[i] for i in ids} for c in blocks[0])
    p = pair(name, name, first_a, first_b)  # verdict flips: the first round's
    runs = [(x.runs.get(name, {}), y.runs.get(name, {})) for x, y in zip(a, b, strict=True)]
    figures, ratios = [], {}
    for field, label, higher in PAIRED_FIGURES:
        values = [({i: block_value(ra.get(i, ()), field) for i in ids}, {i: block_value(rb.get(i, ()), field) for i in ids})
                  for ra, rb in runs]  # fmt: skip
        # the same samples in every round (those with a figure in every block), so the rounds' mixes are alike
        use = [i for i in ids if all(va[i] is not None and vb[i] is not None for va, vb in values)]
        r = rounds_ratio_ci([([va[i] for i in use], [vb[i] for i in use]) for va, vb in values], FAMILY_LEVEL)
        if r is not None:
            figures.append(paired_figure(field, label, higher, r))
            ratios[field] = r
    scored = [i for i in ids if first_a[i].passed is not None and first_b[i].passed is not None]

    def rate(cells: Mapping[str, SampleCell]) -> float | None:
        return round(100.0 * sum(bool(cells[i].passed) for i in scored) / len(scored), 1) if scored else None

    to_fail = tuple(i for i in scored if first_a[i].passed and not first_b[i].passed)
    to_pass = tuple(i for i in scored if first_b[i].passed and not first_a[i].passed)
    row = DeviceDelta(
        name, replace(p, figures=tuple(figures)), rate(first_a), rate(first_b), to_fail, to_pass
    )
    return row, ratios, len(ids)


def ab_comparison(a: Sequence[Block], b: Sequence[Block]) -> tuple[Comparison, dict[str, dict[str, Ratio]]]:
    """B's blocks against A's, round by round (a[k] and b[k]: round k's neighbouring blocks), device by
    device, on the samples every block ran; with each device's ratios by figure (Ratio.rounds: per round)."""
    if len(a) != len(b) or not a:
        raise ValueError(f"ab_comparison: {len(a)} blocks of A against {len(b)} of B")
    names = [
        d.device
        for d in a[0].report.devices
        if all(d.device in {x.device for x in r.report.devices} for r in (*a, *b))
    ]
    rows, rounds, common = [], {}, 0
    for name in names:
        row, rounds[name], n = _device(name, a, b)
        rows.append(row)
        common = max(common, n)
    rows.sort(key=lambda d: -d.worse)  # significant changes for the worse first, as compare lists them
    c = Comparison(f"A ({len(a)} blocks)", f"B ({len(b)} blocks)", (), common, tuple(rows),
                   conditions=settle_findings(a, b))  # fmt: skip
    return c, rounds


def settle_findings(a: Sequence[Block], b: Sequence[Block]) -> tuple[str, ...]:
    """What --settle's gate said of the counted blocks (docs/conditions.md), for the comparison's
    conditions (every format prints them): how many of each side's blocks started on a device that had not
    settled (the gate's maximum wait passed: measured while its temperature still moved), in which round on
    which device; and the blocks the gate could not apply to (no sensor readable). () when every gated
    block settled, or none was gated (--no-settle)."""
    sides, unsettled = [], 0
    for side, blocks in (("A", a), ("B", b)):
        bad = []
        for k, x in enumerate(blocks, 1):  # x: round k's block of this side
            moving = [(row.device, s) for row in x.report.devices for s in row.settle if s.settled is False]
            if moving:
                bad.append(f"round {k}: " + ", ".join(f"{d} still {s.span_c or 0:.1f} °C over {s.window_s:g} s"
                                                       for d, s in moving))  # fmt: skip
        unsettled += len(bad)
        sides.append(f"{side} {len(bad)} of {len(blocks)}" + (f" ({'; '.join(bad)})" if bad else ""))
    said = ("UNSETTLED blocks (--settle reached its maximum wait: measured while a device's temperature still "
            f"moved): {', '.join(sides)}")  # fmt: skip
    out = [said] if unsettled else []
    ungated: dict[str, int] = {}
    for x in (*a, *b):
        for row in x.report.devices:
            if any(s.settled is None for s in row.settle):
                ungated[row.device] = ungated.get(row.device, 0) + 1
    if ungated:
        out.append("settle not applied (no temperature sensor readable): "
                   + ", ".join(f"{d} in {n} of {len(a) + len(b)} blocks" for d, n in ungated.items()))  # fmt: skip
    return tuple(out)


def resolution(r: Ratio) -> float | None:
    """The smallest change the run could tell from none: half its interval's width on the log scale, as
    a fraction (0.05: a ratio within about 5% of 1 is not told apart); None without an interval."""
    if r.lo is None or r.hi is None or r.lo <= 0:
        return None
    return (r.hi / r.lo) ** 0.5 - 1.0


def widest_resolution(ratios: Mapping[str, Mapping[str, Ratio]], field: str = "wall_ms") -> float | None:
    """The largest resolution of `field` over the devices (what --resolve waits for); None when a device
    has no interval for it yet."""
    got = [resolution(per[field]) if field in per else None for per in ratios.values()]
    return None if not got or any(x is None for x in got) else max(got)


def should_stop(rounds_done: int, ratios: Mapping[str, Mapping[str, Ratio]], resolve: float | None) -> bool:
    """--resolve: stop once every device's time per sample is resolved to `resolve` (a fraction), checked
    after whole ABBA pairs of rounds from RESOLVE_FROM_ROUNDS on. Stopping on the interval's width, never
    on its place, leaves its coverage as it is (a width says nothing about where the ratio lies)."""
    if resolve is None or rounds_done < RESOLVE_FROM_ROUNDS or rounds_done % 2:
        return False
    widest = widest_resolution(ratios)
    return widest is not None and widest <= resolve


def rounds_text(ratios: Mapping[str, Mapping[str, Ratio]], field: str = "wall_ms") -> list[str]:
    """`cpu-a: time per sample B/A by round 1.01 0.98 1.03 0.99; resolves ±2.1%`: what the interval is made
    of, and the smallest difference it could show (so "no significant difference" is not read as "none")."""
    label = next(lb for f, lb, _ in PAIRED_FIGURES if f == field)
    out = []
    for name, per in ratios.items():
        r = per.get(field)
        if r is None or not r.rounds:
            continue
        res = resolution(r)
        tail = f"; resolves ±{100 * res:.1f}% (half the interval)" if res is not None else ""
        out.append(f"{name}: {label.lower()} B/A by round " + " ".join(f"{x:.3f}" for x in r.rounds) + tail)
    return out
