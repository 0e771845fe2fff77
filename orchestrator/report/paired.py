"""Paired comparisons on the same samples (pure): device B against the baseline device A in one
run, or a device in run B against itself in run A (`compare`).

Verdict flips: an exact McNemar test on the discordant samples. Figures: the geometric mean of the
per-sample ratios B/A with a bootstrap interval (stats.py). A difference is reported only when the
interval excludes 1 and the ratio is more than NOISE away from it (criterion.rs's "noise
threshold": a 0.3% shift a paired test can resolve on 200 samples is no reason to pick a device).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..catalogue import PAIRED
from ..stats import ALPHA, Ratio, Resamples, mcnemar_exact, paired_ratio_ci
from .types.paired import Paired, PairedFigure
from .types.sample_row import SampleCell, SampleRow

NOISE = 0.02  # |ratio - 1| at or below this is "no significant difference", whatever the interval
# SampleCell field, label, higher is better (catalogue.MEASURES)
PAIRED_FIGURES = tuple((m.field, m.label, m.higher_is_better) for m in PAIRED)


def pair(
    a: str,
    b: str,
    cells_a: Mapping[str, SampleCell],
    cells_b: Mapping[str, SampleCell],
    draws: Resamples | None = None,
) -> Paired:
    """B against A over the sample ids both have (cells by sample id); `draws`: the bootstrap's
    resamples shared with the other pairs (stats.Resamples)."""
    draws = draws or Resamples()
    ids = [i for i in cells_a if i in cells_b]
    scored = [
        (cells_a[i], cells_b[i])
        for i in ids
        if cells_a[i].passed is not None and cells_b[i].passed is not None
    ]
    a_only = sum(1 for x, y in scored if x.passed and not y.passed)
    b_only = sum(1 for x, y in scored if y.passed and not x.passed)
    strict = [
        (x.strict_passed, y.strict_passed)
        for x, y in scored
        if x.strict_passed is not None and y.strict_passed is not None
    ]
    sa = sum(1 for x, y in strict if x and not y)
    sb = sum(1 for x, y in strict if y and not x)
    ok = [(cells_a[i], cells_b[i]) for i in ids if cells_a[i].status == "ok" and cells_b[i].status == "ok"]
    figures = []
    for field, label, higher in PAIRED_FIGURES:
        r = paired_ratio_ci(
            [getattr(x, field) for x, _ in ok], [getattr(y, field) for _, y in ok], draws=draws
        )
        if r is not None:
            figures.append(paired_figure(field, label, higher, r))
    return Paired(a, b, len(scored), a_only, b_only, mcnemar_exact(a_only, b_only), tuple(figures),
                  sa, sb, mcnemar_exact(sa, sb))  # fmt: skip


def paired_figure(field: str, label: str, higher: bool, r: Ratio) -> PairedFigure:
    """A figure's ratio B/A as reported: significant only when the interval excludes 1 and the ratio
    is past the noise threshold."""
    sig = r.significant and abs(r.ratio - 1.0) > NOISE
    return PairedFigure(field, label, higher, round(r.ratio, 4), None if r.lo is None else round(r.lo, 4),
                        None if r.hi is None else round(r.hi, 4), r.pairs, sig)  # fmt: skip


def against_baseline(samples: Sequence[SampleRow], names: Sequence[str], baseline: str) -> tuple[Paired, ...]:
    """Every device but the baseline, against it, on the samples both have."""
    if baseline not in names:
        return ()

    def cells(name: str) -> dict[str, SampleCell]:
        return {s.id: s.cells[name] for s in samples if name in s.cells}

    base = cells(baseline)
    draws = Resamples()  # one draw per number of pairs, for every device and figure
    return tuple(pair(baseline, n, base, cells(n), draws) for n in names if n != baseline)


def flips_text(p: Paired) -> str:
    """`3 pass→fail, 0 fail→pass of 40 (McNemar p=0.25): no significant difference`."""
    head = f"{p.a_only} pass→fail, {p.b_only} fail→pass of {p.common} (McNemar p={p.p_value:.3g})"
    if p.p_value < ALPHA:
        better = p.b if p.b_only > p.a_only else p.a
        return f"{head}: {better} passes significantly more"
    return f"{head}: no significant difference"


def ratio_text(f: PairedFigure, a: str, b: str) -> str:
    """`2.01x (1.98–2.04): b slower` / `1.00x (0.98–1.02): no significant difference`."""
    if f.ratio is None:
        return "–"
    ci = f" ({f.lo:.2f}–{f.hi:.2f})" if f.lo is not None and f.hi is not None else " (no interval: 1 pair)"
    head = f"{f.ratio:.2f}x{ci}"
    if not f.significant:
        return f"{head}: no significant difference"
    better = (f.ratio > 1) == f.higher_is_better
    return f"{head}: {b} {'better' if better else 'worse'}"


def speedup(p: Paired) -> tuple[float, float | None, float | None] | None:
    """The baseline's sample time over B's (2.0: B answers twice as fast), with its interval."""
    f = p.figure("wall_ms")
    if f is None or not f.ratio:
        return None
    return 1.0 / f.ratio, (1.0 / f.hi if f.hi else None), (1.0 / f.lo if f.lo else None)
