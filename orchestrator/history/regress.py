"""A device's judged series -> its changes (pure): each run whose figure left the usual band of the
comparable runs before it (history/judge.py), named with the versions that differ from the last run
it was judged against."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .judge import CHANGE, JUDGED_AGAINST
from .types import Change, Judgement, Point


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
    device: str, points: Sequence[Point], judgements: Mapping[str, Sequence[Judgement | None]]
) -> tuple[Change, ...]:
    """Every CHANGE among `judgements` (figure -> one per point), in run order then figure order."""
    out = []
    for i, p in enumerate(points):
        for figure, js in judgements.items():
            j = js[i]
            if j is None or j.state != CHANGE or j.value is None or j.mean is None:
                continue
            before = next(
                points[k] for k in range(i - 1, -1, -1) if (b := js[k]) and b.state in JUDGED_AGAINST
            )
            out.append(Change(device, figure, p.run_id, before.run_id, j.value, j.mean, j.lo, j.hi, j.runs,
                              bool(j.worse), j.confirmed, versions_text(before, p), p.conditions))  # fmt: skip
    return tuple(out)
