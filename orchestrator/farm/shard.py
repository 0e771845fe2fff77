"""`edgefarm run --shard`: identical devices share one evaluation, and the report shows them as one.

Devices are identical when they are the same phone model with the same SoC on the same OS build,
running the same runner on the same backend with the same threads. Such a group splits the samples round-robin (sample i goes
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
    """What must be equal for two devices to share the work or be units of one model: the hardware, the
    OS build (an OS update changes the kernel, drivers and governor: another build is another device),
    the runner and the engine's settings."""
    return (*_hardware(info, device, opts), info.os, info.build)


def _hardware(info: DeviceInfo, device: Device, opts: RunOptions) -> tuple[str, ...]:
    return (info.kind, info.manufacturer, info.model, info.soc, info.abi, kind_spec(device.kind).runner, opts.backend,
            str(opts.threads or ""))  # fmt: skip


def build_tag(info: DeviceInfo) -> str:
    """A build, short: a fingerprint's build id and number (`google/shiba/shiba:14/AP2A.240805.005/
    12025142:user/release-keys` -> `AP2A.240805.005 12025142`), else the build as read, else the OS."""
    parts = info.build.split("/")
    short = f"{parts[3]} {parts[4].split(':')[0]}" if len(parts) > 4 else info.build
    return short or info.os or "unknown build"


def split_by_build(
    devices: Sequence[Device], opts: Mapping[str, RunOptions], infos: Mapping[str, DeviceInfo | None]
) -> list[str]:
    """A note per model whose devices are alike but on different OS builds, so not grouped together
    (--shard, --units): which build each device runs."""
    by_hw: dict[tuple[str, ...], list[tuple[Device, DeviceInfo]]] = {}
    for d in devices:
        info = infos.get(d.name)
        if info is not None:
            by_hw.setdefault(_hardware(info, d, opts[d.name]), []).append((d, info))
    out = []
    for members in by_hw.values():
        builds: dict[str, list[str]] = {}
        for d, info in members:
            builds.setdefault(build_tag(info), []).append(d.name)
        if len(builds) > 1:
            each = "; ".join(f"{b}: {', '.join(names)}" for b, names in builds.items())
            out.append(f"{members[0][1].model or members[0][0].name}: {len(members)} devices on {len(builds)} OS "
                       f"builds, grouped by build, never as one model's units or shards ({each})")  # fmt: skip
    return out


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
    builds: dict[str, set[str]] = {}  # model -> the builds its groups run
    for members in by_key.values():
        info = infos[members[0].name]
        if len(members) > 1 and info is not None:
            builds.setdefault(info.model, set()).add(build_tag(info))
    for members in by_key.values():
        if len(members) < 2:
            continue
        info = infos[members[0].name]
        assert info is not None
        # a model with groups on several builds: each group's name says its build
        build = f"-{slug(build_tag(info))}" if len(builds[info.model]) > 1 else ""
        name = f"{slug(info.model or members[0].name) or 'device'}{build}-x{len(members)}"
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
