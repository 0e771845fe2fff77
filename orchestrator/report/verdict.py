"""One verdict per figure (pure): which device of a run is best at a figure, or tied, decided once and
read by every view (the table's ★ / tied in the terminal, report.md and report.html, and the paired
lines under it, which print the same PairedFigure this reads).

A figure the paired comparison covers (the median of a paired measure: time per sample and its
speed-up, TTFT, prefill, decode, energy; the pass rates by their verdict flips) is decided by the
paired test on the same samples (report/paired.py: the ratio's interval clear of 1 and past the noise
threshold; McNemar for flips): the device with the best paired ratio leads; it is best when the test
finds it better than every other device, else it and the devices the test cannot tell from it are
tied. Before, the table marked these by the overlap of each device's own interval while the line under
it printed the paired test: "TTFT tied" above "TTFT 0.87x (0.78-0.97): host-t2 better". Every other
figure (p90s, per-token energy) is marked by its interval (best.py). A device that did not run every
sample is never marked, and the speed-up's baseline (1.00 by definition) never is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ..catalogue import FIGURE, HIGHER_IS_BETTER, MEASURE
from ..stats import ALPHA, Resamples
from .best import BEST, TIED, Entry, marks
from .paired import pair
from .types.paired import Paired
from .types.run_report import RunReport
from .types.sample_row import SampleCell

# pass rates: decided by the verdict flips (field of Paired: (p-value, passes only A has, only B has))
_FLIPS: Mapping[str, Callable[[Paired], tuple[float, int, int]]] = {
    "pass_rate_pct": lambda p: (p.p_value, p.a_only, p.b_only),
    "strict_pass_rate_pct": lambda p: (p.strict_p_value, p.strict_a_only, p.strict_b_only),
}


def paired_measure(field: str) -> str:
    """The paired measure that decides a figure ('' when its interval does): the median of a paired
    measure, and the speed-up (of time per sample)."""
    f = FIGURE.get(field)
    if f is None or not f.measure or f.stat not in ("p50", "vs baseline"):
        return ""
    m = MEASURE.get(f.measure)
    return f.measure if m is not None and m.paired else ""


class _Pairs:
    """The run's pairs of devices on the same samples: the report's against the baseline, the others
    made when a verdict needs them (once each, one bootstrap draw for all)."""

    def __init__(self, report: RunReport) -> None:
        self.report = report
        self.known = {(p.a, p.b): p for p in report.paired}
        self.draws = Resamples()

    def get(self, a: str, b: str) -> tuple[Paired, bool]:
        """The pair of a and b, and whether it is stored as (b, a)."""
        if (a, b) in self.known:
            return self.known[(a, b)], False
        if (b, a) in self.known:
            return self.known[(b, a)], True
        p = pair(a, b, self._cells(a), self._cells(b), self.draws)
        self.known[(a, b)] = p
        return p, False

    def _cells(self, name: str) -> dict[str, SampleCell]:
        return {s.id: s.cells[name] for s in self.report.samples if name in s.cells}

    def beats(self, a: str, b: str, field: str, measure: str) -> bool | None:
        """True: the paired test finds a better than b on `field`; False: it cannot tell them apart or
        finds b better; None: no pair to test."""
        p, swapped = self.get(a, b)
        if field in _FLIPS:
            p_value, a_only, b_only = _FLIPS[field](p)
            if swapped:
                a_only, b_only = b_only, a_only
            return p_value < ALPHA and a_only > b_only
        f = p.figure(measure)
        if f is None or f.ratio is None:
            return None
        b_better = (f.ratio > 1) == f.higher_is_better
        return f.significant and (b_better == swapped)

    def score(self, name: str, field: str, measure: str) -> float | None:
        """How good `name` is on the figure, one scale for every device (higher is better): its pass
        rate, or its paired ratio against the baseline's (the baseline 1), None without one."""
        if field in _FLIPS:
            return None
        base = self.report.baseline
        if name == base:
            return 1.0
        p = self.known.get((base, name))
        f = p.figure(measure) if p is not None else None
        if f is None or not f.ratio:
            return None
        return f.ratio if f.higher_is_better else 1.0 / f.ratio


def figure_marks(
    report: RunReport, field: str, entries: Sequence[Entry], pairs: _Pairs | None = None
) -> list[str]:
    """BEST, TIED or "" per device row (in report.devices order) for the figure `field`; `entries`: the
    devices' values and intervals as shown (the interval rule's input)."""
    higher = HIGHER_IS_BETTER.get(field)
    if higher is None:
        return [""] * len(entries)
    measure = "wall_ms" if field == "speedup" else paired_measure(field)
    names = [r.device for r in report.devices]
    out = (
        _paired_marks(report, field, measure, entries, names, pairs or _Pairs(report))
        if ((measure or field in _FLIPS) and report.paired)
        else marks(entries, higher)
    )
    if field == "speedup":  # the baseline's speed-up is 1.00 by definition: no verdict against itself
        out = ["" if n == report.baseline else m for n, m in zip(names, out, strict=True)]
    return out


def _paired_marks(report: RunReport, field: str, measure: str, entries: Sequence[Entry], names: Sequence[str],
                  pairs: _Pairs) -> list[str]:  # fmt: skip
    out = [""] * len(entries)
    have = [i for i, e in enumerate(entries) if e.value is not None]
    candidates = [i for i in have if entries[i].eligible]
    if len(have) < 2 or not candidates:
        return out
    if field in _FLIPS:
        score = {i: entries[i].value for i in candidates}
    else:
        score = {i: s for i in candidates if (s := pairs.score(names[i], field, measure)) is not None}
    if not score:
        return out
    lead = max(score, key=lambda i: score[i])  # type: ignore[arg-type,return-value]
    tied = []
    for i in candidates:
        if i != lead and not pairs.beats(names[lead], names[i], field, measure):
            tied.append(i)
    if not tied:
        out[lead] = BEST
        return out
    if len(tied) + 1 == len(have) and len({entries[i].shown for i in have}) == 1:
        return out  # every device shows the same and the test cannot tell them apart: nothing to mark
    for i in [lead, *tied]:
        out[i] = TIED
    return out


def run_marks(report: RunReport, entries: Mapping[str, Sequence[Entry]]) -> dict[str, list[str]]:
    """figure_marks of each figure in `entries` (field -> the devices' entries), the run's pairs made
    once for all of them."""
    pairs = _Pairs(report)
    return {f: figure_marks(report, f, e, pairs) for f, e in entries.items()}
