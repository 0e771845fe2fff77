"""`edgefarm run --shard`: identical devices share one evaluation, and the report shows them as one.

Devices are identical when they are the same phone model with the same SoC, running the same runner
on the same backend with the same threads. Such a group splits the samples round-robin (sample i goes
to member i mod k, so every member gets every modality), each member runs its share in its own
session and folder, and afterwards the group gets ONE folder, `devices/<model>-x<k>/`, with the
merged rows in dataset order (each row's `ran_on` names the phone that ran it), one score over all
samples, and the members' serials. run.json lists the group under `devices` and its members under
`shards`, so the report has one row per phone model. A device alone in its group runs everything.
The plan is pure (this module); the merge after the run is shard_merge.py.

`edgefarm run --units` forms the same groups (`identical_groups`) but splits nothing: every unit runs
every sample in its own row, and the report compares the units (report/units.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..datasets.types import Sample
from ..devices.base import Device
from ..devices.kinds import kind_spec
from ..devices.types import DeviceInfo, slug
from ..runners.base import RunOptions


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


def identity(info: DeviceInfo, device: Device, opts: RunOptions) -> tuple[str, ...]:
    """What must be equal for two devices to share the work."""
    return (info.kind, info.manufacturer, info.model, info.soc, info.abi, kind_spec(device.kind).runner, opts.backend,
            str(opts.threads or ""))  # fmt: skip


def split(samples: Sequence[Sample], k: int) -> list[tuple[Sample, ...]]:
    """Round-robin: member j runs samples j, j+k, j+2k, ... (every member sees every modality)."""
    return [tuple(samples[j::k]) for j in range(k)]


def identical_groups(
    devices: Sequence[Device], opts: Mapping[str, RunOptions], infos: Mapping[str, DeviceInfo | None]
) -> list[ShardGroup]:
    """The groups of two or more identical devices (pure: `infos` were read before the plan, read_inputs),
    each named by its model and count (`pixel-8-x3`); a device whose info could not be read (None) is
    in none (its session reports the error)."""
    by_key: dict[tuple[str, ...], list[Device]] = {}
    for d in devices:
        info = infos.get(d.name)
        key = identity(info, d, opts[d.name]) if info is not None else ("alone", d.name)
        by_key.setdefault(key, []).append(d)
    groups = []
    taken = {d.name for d in devices}
    for members in by_key.values():
        if len(members) < 2:
            continue
        info = infos[members[0].name]
        assert info is not None
        name = f"{slug(info.model or members[0].name) or 'device'}-x{len(members)}"
        while name in taken:
            name += "-shards"
        taken.add(name)
        groups.append(ShardGroup(name, tuple(m.name for m in members),
                                 tuple(infos[m.name].serial or m.name for m in members)))  # fmt: skip
    return groups


def plan_shards(
    devices: Sequence[Device],
    opts: Mapping[str, RunOptions],
    samples: Sequence[Sample],
    infos: Mapping[str, DeviceInfo | None],
) -> ShardPlan:
    """Group the identical devices and split the samples between each group's members."""
    groups = identical_groups(devices, opts, infos)
    assignment = {d.name: tuple(samples) for d in devices}
    for g in groups:
        for m, share in zip(g.members, split(samples, len(g.members)), strict=True):
            assignment[m] = share
    return ShardPlan(tuple(groups), assignment, {k: v for k, v in infos.items() if v is not None})
