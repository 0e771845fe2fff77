"""--shard's plan (orchestrator/farm/shard.py, pure): the round-robin split and who is identical."""

from __future__ import annotations

from orchestrator.datasets.types import Sample
from orchestrator.devices.types import DeviceInfo
from orchestrator.farm.shard import ShardGroup, ShardPlan, identity
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
