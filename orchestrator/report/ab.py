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
printers and --fail-on gate serve `compare` and `ab` (compare_out.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from ..stats import rounds_ratio_ci
from .compare import Comparison, DeviceDelta
from .paired import PAIRED_FIGURES, pair, paired_figure
from .types import RunReport, SampleCell

MAX_ROUNDS = 20
MIN_ROUNDS = 2  # an interval over the rounds needs two of them
# Every figure's interval at 1 - 5%/k (Bonferroni over the k figures ab tests): --fail-on fails when ANY
# figure is significantly worse, so at 95% each, two identical configurations failed the gate far more
# often than 5% of the time (issue 36 lab: decode 0.78x (0.61-0.999) between identical blocks).
FAMILY_LEVEL = 1 - 0.05 / len(PAIRED_FIGURES)


def order(rounds: int) -> list[str]:
    """The blocks' configurations in run order: AB BA AB BA ... (`rounds` rounds)."""
    return [x for r in range(rounds) for x in (("a", "b") if r % 2 == 0 else ("b", "a"))]


def _cells(run: RunReport, device: str) -> dict[str, SampleCell]:
    return {s.id: s.cells[device] for s in run.samples if device in s.cells}


def _usable(cell: SampleCell, field: str) -> bool:
    v = getattr(cell, field)
    return cell.status == "ok" and v is not None and v > 0


def _device(
    name: str, a: Sequence[RunReport], b: Sequence[RunReport]
) -> tuple[DeviceDelta, dict[str, tuple[float, ...]], int]:
    """One device's row, each figure's per-round ratios and the number of samples every block ran."""
    blocks = [(_cells(x, name), _cells(y, name)) for x, y in zip(a, b, strict=True)]
    ids = [i for i in blocks[0][0] if all(i in ca and i in cb for ca, cb in blocks)]
    first_a, first_b = ({i: c[i] for i in ids} for c in blocks[0])
    p = pair(name, name, first_a, first_b)  # verdict flips: the first round's
    figures, per_round = [], {}
    for field, label, higher in PAIRED_FIGURES:
        # the same samples in every round (those every block ran ok), so the rounds' mixes are alike
        use = [i for i in ids if all(_usable(ca[i], field) and _usable(cb[i], field) for ca, cb in blocks)]
        r = rounds_ratio_ci([([getattr(ca[i], field) for i in use], [getattr(cb[i], field) for i in use])
                             for ca, cb in blocks], FAMILY_LEVEL)  # fmt: skip
        if r is not None:
            figures.append(paired_figure(field, label, higher, r))
            per_round[field] = r.rounds
    scored = [i for i in ids if first_a[i].passed is not None and first_b[i].passed is not None]

    def rate(cells: Mapping[str, SampleCell]) -> float | None:
        return round(100.0 * sum(bool(cells[i].passed) for i in scored) / len(scored), 1) if scored else None

    to_fail = tuple(i for i in scored if first_a[i].passed and not first_b[i].passed)
    to_pass = tuple(i for i in scored if first_b[i].passed and not first_a[i].passed)
    row = DeviceDelta(
        name, replace(p, figures=tuple(figures)), rate(first_a), rate(first_b), to_fail, to_pass
    )
    return row, per_round, len(ids)


def ab_comparison(
    a: Sequence[RunReport], b: Sequence[RunReport]
) -> tuple[Comparison, dict[str, dict[str, tuple[float, ...]]]]:
    """B's blocks against A's, round by round (a[k] and b[k]: round k's neighbouring blocks), device by
    device, on the samples every block ran; with each device's per-round ratios by figure."""
    if len(a) != len(b) or not a:
        raise ValueError(f"ab_comparison: {len(a)} blocks of A against {len(b)} of B")
    names = [
        d.device for d in a[0].devices if all(d.device in {x.device for x in r.devices} for r in (*a, *b))
    ]
    rows, rounds, common = [], {}, 0
    for name in names:
        row, rounds[name], n = _device(name, a, b)
        rows.append(row)
        common = max(common, n)
    rows.sort(key=lambda d: -d.worse)  # significant changes for the worse first, as compare lists them
    c = Comparison(f"A ({len(a)} blocks)", f"B ({len(b)} blocks)", (), common, tuple(rows))
    return c, rounds


def rounds_text(rounds: Mapping[str, Mapping[str, tuple[float, ...]]], field: str = "wall_ms") -> list[str]:
    """`cpu-a: time per sample B/A by round 1.01 0.98 1.03 0.99`: what the interval is made of."""
    label = next(lb for f, lb, _ in PAIRED_FIGURES if f == field)
    return [f"{name}: {label.lower()} B/A by round " + " ".join(f"{x:.3f}" for x in per[field])
            for name, per in rounds.items() if per.get(field)]  # fmt: skip
