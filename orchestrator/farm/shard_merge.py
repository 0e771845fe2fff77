"""`edgefarm run --shard` after the run: each group of identical devices gets ONE folder,
`devices/<model>-x<k>/`, with its members' rows merged in dataset order (each row's `ran_on` names the
phone that ran it), one score over all samples, and the members' serials (the plan: shard.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path

from ..datasets.types import Dataset, Sample
from ..devices.types import PushStats
from ..errors import EdgefarmError
from ..fsutil import write_json_atomic
from .rundir import device_folder, write_outcome
from .session import write_results
from .shard import ShardPlan
from .types import DeviceOutcome, Score


def merge_shards(
    plan: ShardPlan,
    outcomes: Sequence[DeviceOutcome],
    dataset: Dataset,
    samples: Sequence[Sample],
    run_dir: Path,
    score: Score,
) -> list[DeviceOutcome]:
    """Each group's folder: merged rows (with `ran_on`), one score over all samples, the serials."""
    by_name = {o.name: o for o in outcomes}
    merged = []
    for g in plan.groups:
        parts = [by_name[m] for m in g.members if m in by_name]
        serial = dict(zip(g.members, g.serials, strict=True))
        rows = {r.id: replace(r, ran_on=serial[o.name]) for o in parts for r in o.results}
        first = next((o for o in parts if o.info is not None), parts[0])
        info = plan.infos.get(first.name) or first.info
        out = DeviceOutcome(name=g.name, kind=first.kind)
        if info is not None:
            shares = {m: len(plan.assignment[m]) for m in g.members}
            extra = dict(info.extra) | {"shards": [{"name": m, "serial": serial[m], "samples": shares[m]}
                                                   for m in g.members]}  # fmt: skip
            out.info = replace(info, name=g.name, serial=", ".join(g.serials), extra=extra)
        out.results = [rows[s.id] for s in samples if s.id in rows]
        out.error = "; ".join(f"{o.name}: {o.error}" for o in parts if o.error)
        out.error_code = max((o.error_code for o in parts), default=0)
        out.wall_s = max((o.wall_s or 0.0 for o in parts), default=None)
        out.model_push = sum((o.model_push for o in parts), PushStats())
        out.other_push = sum((o.other_push for o in parts), PushStats())
        out.notes = [f"{o.name}: {n}" for o in parts for n in o.notes]
        out.runner = dict(first.runner)
        out.model_loads = sum(o.model_loads for o in parts)
        out.interrupted = any(o.interrupted for o in parts)
        dev_dir = device_folder(run_dir, g.name)
        dev_dir.mkdir(parents=True, exist_ok=True)
        if out.info is not None:
            write_json_atomic(dev_dir / "device.json", asdict(out.info))
        if out.results:
            try:
                write_results(out, dataset, samples, dev_dir, score)
            except EdgefarmError as e:
                out.error = out.error or str(e)
        write_outcome(dev_dir, out)
        merged.append(out)
    return merged
