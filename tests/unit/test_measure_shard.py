"""--warmup/--repeat job expansion and --shard's round-robin split and grouping (pure parts)."""

from __future__ import annotations

from android_runner.contract import SampleResult
from orchestrator.datasets.types import Sample
from orchestrator.devices.types import DeviceInfo
from orchestrator.farm.shard import ShardGroup, ShardPlan, identity
from orchestrator.farm.shard import split as shard_split
from orchestrator.measure import base_id, describe, expand, measured_count, split
from orchestrator.runners.base import RunOptions


def _samples(n: int) -> list[Sample]:
    return [
        Sample(id=f"S{i}", modality="text", task="qa", turns=(), reference="", references=())
        for i in range(n)
    ]


def test_expand_puts_warmups_first_then_passes_and_split_takes_them_apart():
    samples = _samples(3)
    job = expand(samples, repeat=2, warmup=4)
    ids = [s.id for s in job]
    assert ids == [
        "S0@warmup1",
        "S1@warmup2",
        "S2@warmup3",
        "S0@warmup4",
        "S0",
        "S1",
        "S2",
        "S0@r2",
        "S1@r2",
        "S2@r2",
    ]
    assert len(job) == measured_count(3, 2, 4)
    rows = [SampleResult(id=i, status="ok") for i in reversed(ids)]
    first, repeats, warm = split(samples, rows)
    assert [r.id for r in first] == ["S0", "S1", "S2"]
    assert sorted(r.id for r in repeats) == ["S0@r2", "S1@r2", "S2@r2"]
    assert sorted(r.id for r in warm) == ["S0@warmup1", "S0@warmup4", "S1@warmup2", "S2@warmup3"]
    assert base_id("S1@r2") == "S1" and base_id("S0@warmup4") == "S0" and base_id("a@rb") == "a@rb"
    assert expand(samples) == tuple(samples) and describe(3, 1, 0) == ""
    assert describe(3, 2, 4) == "6 runs: 3 samples x 2 (first run scored); 4 warm-up run(s) not counted"


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
