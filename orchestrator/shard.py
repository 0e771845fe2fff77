"""`edgefarm run --shard`: identical devices share one evaluation, and the report shows them as one.

Devices are identical when they are the same phone model with the same SoC, running the same runner
on the same backend with the same threads. Such a group splits the samples round-robin (sample i goes
to member i mod k, so every member gets every modality), each member runs its share in its own
session and folder, and afterwards the group gets ONE folder, `devices/<model>-x<k>/`, with the
merged rows in dataset order (each row's `ran_on` names the phone that ran it), one score over all
samples, and the members' serials. run.json lists the group under `devices` and its members under
`shards`, so the report has one row per phone model. A device alone in its group runs everything.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from .datasets.types import Dataset, Sample
from .devices.base import Device
from .devices.types import DeviceInfo, PushStats
from .errors import EdgefarmError
from .fsutil import write_json_atomic
from .run.types import DeviceOutcome, Score
from .rundir import device_folder, write_outcome
from .runners.base import RunOptions
from .session import write_results


@dataclass(frozen=True)
class ShardGroup:
    name: str  # the merged device's name: the model slug and the member count, e.g. pixel-8-x4
    members: tuple[str, ...]  # device names, in selection order
    serials: tuple[str, ...]


@dataclass(frozen=True)
class ShardPlan:
    groups: tuple[ShardGroup, ...]
    assignment: Mapping[str, tuple[Sample, ...]]  # device name -> the samples it runs
    infos: Mapping[str, DeviceInfo]

    def report_devices(self, devices: Sequence[str]) -> list[str]:
        """run.json's device list: each group once (where its first member was), members left out."""
        first = {g.members[0]: g.name for g in self.groups}
        member = {m for g in self.groups for m in g.members}
        out: list[str] = []
        for d in devices:
            name = first.get(d, d if d not in member else "")
            if name and name not in out:
                out.append(name)
        return out

    def record(self) -> dict[str, list[str]]:
        return {g.name: list(g.members) for g in self.groups}


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "device"


def identity(info: DeviceInfo, device: Device, opts: RunOptions) -> tuple[str, ...]:
    """What must be equal for two devices to share the work."""
    return (info.kind, info.manufacturer, info.model, info.soc, info.abi, device.runner, opts.backend,
            str(opts.threads or ""))  # fmt: skip


def split(samples: Sequence[Sample], k: int) -> list[tuple[Sample, ...]]:
    """Round-robin: member j runs samples j, j+k, j+2k, ... (every member sees every modality)."""
    return [tuple(samples[j::k]) for j in range(k)]


def plan_shards(
    devices: Sequence[Device],
    opts: Mapping[str, RunOptions],
    samples: Sequence[Sample],
    known: Sequence[DeviceInfo] = (),
) -> ShardPlan:
    """Group the identical devices. `known` are the devices' infos when the selection already asked
    (`--devices all`), else every device is asked (in parallel); a device whose info cannot be read
    runs alone (its session reports the error)."""

    def info_of(d: Device) -> DeviceInfo | None:
        try:
            return d.info()
        except EdgefarmError:
            return None

    if len(known) == len(devices):
        infos: dict[str, DeviceInfo | None] = {d.name: i for d, i in zip(devices, known, strict=True)}
    else:
        with ThreadPoolExecutor(max_workers=max(1, min(16, len(devices)))) as pool:
            infos = dict(zip([d.name for d in devices], pool.map(info_of, devices), strict=True))
    by_key: dict[tuple[str, ...], list[Device]] = {}
    for d in devices:
        info = infos[d.name]
        key = identity(info, d, opts[d.name]) if info is not None else ("alone", d.name)
        by_key.setdefault(key, []).append(d)
    groups, assignment = [], {d.name: tuple(samples) for d in devices}
    taken = {d.name for d in devices}
    for members in by_key.values():
        if len(members) < 2:
            continue
        info = infos[members[0].name]
        assert info is not None
        name = f"{slug(info.model or members[0].name)}-x{len(members)}"
        while name in taken:
            name += "-shards"
        taken.add(name)
        groups.append(ShardGroup(name, tuple(m.name for m in members),
                                 tuple(infos[m.name].serial or m.name for m in members)))  # fmt: skip
        for m, share in zip(members, split(samples, len(members)), strict=True):
            assignment[m.name] = share
    return ShardPlan(tuple(groups), assignment, {k: v for k, v in infos.items() if v is not None})


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
