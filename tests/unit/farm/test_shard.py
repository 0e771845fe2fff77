"""--shard's plan (orchestrator/farm/shard.py, pure): the round-robin split and who is identical."""

from __future__ import annotations

from dataclasses import replace

from orchestrator.datasets.types import Sample
from orchestrator.devices.types import DeviceInfo
from orchestrator.farm.shard import ShardGroup, ShardPlan, identical_groups, identity, split_by_build
from orchestrator.farm.shard import split as shard_split
from orchestrator.runners.base import RunOptions


def _samples(n: int) -> list[Sample]:
    return [
        Sample(id=f"S{i}", modality="text", task="qa", turns=(), reference="", references=())
        for i in range(n)
    ]


def test_round_robin_split_covers_every_sample_once():
    samples = _samples(10)
    shares = shard_split(samples, 4)
    assert [[s.id for s in share] for share in shares] == [
        ["S0", "S4", "S8"], ["S1", "S5", "S9"], ["S2", "S6"], ["S3", "S7"]
    ]  # fmt: skip


class _Phone:
    kind = "adb"  # its runner is its kind's (devices/kinds.py)


def test_identity_separates_models_socs_and_backends_and_report_lists_each_group_once():
    pixel = DeviceInfo(name="a", kind="adb", model="Pixel 8", soc="Tensor G3", manufacturer="Google")
    other = DeviceInfo(name="b", kind="adb", model="Pixel 8", soc="Tensor G2", manufacturer="Google")
    cpu, gpu = RunOptions(run_id="r"), RunOptions(run_id="r", backend="gpu")
    assert identity(pixel, _Phone(), cpu) == identity(pixel, _Phone(), cpu)
    assert identity(pixel, _Phone(), cpu) != identity(other, _Phone(), cpu)
    assert identity(pixel, _Phone(), cpu) != identity(pixel, _Phone(), gpu)
    plan = ShardPlan(groups=(ShardGroup("pixel-8-x2", ("p1", "p2"), ("s1", "s2")),), assignment={}, infos={})
    assert plan.report_devices(["host", "p1", "p2", "pi"]) == ["host", "pixel-8-x2", "pi"]
    assert plan.record() == {"pixel-8-x2": ["p1", "p2"]}


class _Unit:
    kind = "adb"

    def __init__(self, name: str) -> None:
        self.name = name


def _pixels(builds: dict[str, str]) -> dict[str, DeviceInfo]:
    """Pixel 8s alike in everything but their OS build (`ro.build.fingerprint`'s id)."""
    return {n: DeviceInfo(name=n, kind="adb", model="Pixel 8", soc="Tensor G3", manufacturer="Google",
                          abi="arm64-v8a", os="Android 14 (SDK 34)",
                          build=f"google/shiba/shiba:14/{b}/12025142:user/release-keys")
            for n, b in builds.items()}  # fmt: skip


def test_one_model_on_two_os_builds_is_two_groups_each_named_by_its_build_and_said():
    """Issue 45: units (and shards) of one model on different OS builds are not identical."""
    infos = _pixels({"p1": "AP1A.240505.004", "p2": "AP1A.240505.004", "p3": "AP2A.240805.005",
                     "p4": "AP2A.240805.005", "p5": "AP2A.240805.005"})  # fmt: skip
    devices = [_Unit(n) for n in infos]
    opts = {n: RunOptions(run_id="r") for n in infos}
    groups = identical_groups(devices, opts, infos)
    assert [(g.name, g.members) for g in groups] == [
        ("pixel-8-ap1a-240505-004-12025142-x2", ("p1", "p2")),
        ("pixel-8-ap2a-240805-005-12025142-x3", ("p3", "p4", "p5")),
    ]
    said = ("Pixel 8: 5 devices on 2 OS builds, grouped by build, never as one model's units or shards "
            "(AP1A.240505.004 12025142: p1, p2; AP2A.240805.005 12025142: p3, p4, p5)")  # fmt: skip
    assert split_by_build(devices, opts, infos) == [said]
    alike = {n: replace(i, build=infos["p1"].build) for n, i in infos.items()}  # one build: one group
    assert [(g.name, len(g.members)) for g in identical_groups(devices, opts, alike)] == [("pixel-8-x5", 5)]
    assert split_by_build(devices, opts, alike) == []
    newer = {**alike, "p5": replace(alike["p5"], os="Android 15 (SDK 35)", build="")}  # an update, no fingerprint
    assert [g.members for g in identical_groups(devices, opts, newer)] == [("p1", "p2", "p3", "p4")]
    assert split_by_build(devices, opts, newer)[0].endswith("; Android 15 (SDK 35): p5)")

