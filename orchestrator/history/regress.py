"""A device's run against its last comparable run (pure): the paired statistics `compare` uses
(report/paired.py: exact McNemar on verdict flips, the paired ratio B/A with its bootstrap interval
for time per sample, TTFT, prefill, decode and energy), each significant change named with the
versions that differ between the two runs."""

from __future__ import annotations

from collections.abc import Mapping

from ..report.paired import flips_text, pair, ratio_text
from ..report.types import SampleCell
from ..stats import ALPHA, Resamples
from .types import Change, Point

# A figure's change is reported only when its whole interval lies beyond this (as a ratio, 1.05 = 5%),
# however certain: between two runs the machine itself drifts (a loaded 2-core host moved time per
# sample 2-4% between identical runs, significant on 6 paired samples), and a regression gate that
# fires on drift is ignored. docs/history.md.
MIN_CHANGE_RATIO = 1.05


def _version(p: Point) -> dict[str, str]:
    """What a point ran with, as short texts: runtime, model, runner, edgefarm."""
    return {
        "runtime": p.runtime_version or (p.runtime_sha256[:12] and f"sha256 {p.runtime_sha256[:12]}"),
        "model": p.model_sha256[:12] and f"sha256 {p.model_sha256[:12]}",
        "runner": p.runner_sha256[:12] and f"sha256 {p.runner_sha256[:12]}",
        "edgefarm": p.edgefarm_version,
    }


def versions_text(a: Point, b: Point) -> str:
    """`runtime 0.17.0 → 0.18.0; model sha256 ab12… → cd34…`, or `same versions`."""
    va, vb = _version(a), _version(b)
    diffs = [f"{k} {va[k] or '?'} → {vb[k] or '?'}" for k in va if va[k] != vb[k]]
    return "; ".join(diffs) or f"same versions (runtime {vb['runtime'] or '?'})"


def changes(
    device: str,
    previous: Point,
    current: Point,
    cells_a: Mapping[str, SampleCell],
    cells_b: Mapping[str, SampleCell],
    draws: Resamples | None = None,
) -> tuple[Change, ...]:
    """Every significant change of `current` against `previous` on the samples both ran (a figure's: at
    least MIN_CHANGE_RATIO, its whole interval)."""
    common = {i: c for i, c in cells_a.items() if i in cells_b}
    p = pair(device, device, common, {i: cells_b[i] for i in common}, draws)
    versions = versions_text(previous, current)
    out = []
    if p.p_value < ALPHA and p.a_only != p.b_only:
        out.append(Change(device, "Pass", "passed", current.run_id, previous.run_id, None, None, None, p.common,
                          p.a_only > p.b_only, flips_text(p), versions))  # fmt: skip
    for f in p.figures:
        if f.significant and (f.lo > MIN_CHANGE_RATIO or f.hi < 1 / MIN_CHANGE_RATIO):
            worse = (f.ratio > 1) != f.higher_is_better
            out.append(Change(device, f.label, f.field, current.run_id, previous.run_id, f.ratio, f.lo, f.hi,
                              f.pairs, worse, ratio_text(f, previous.run_id, device), versions))  # fmt: skip
    return tuple(out)
