"""`plan` decides a run without a device: this host's devices one after another (or together when
asked), each device's options, what a resume continues; DeviceOutcome's one codec and its sums."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from orchestrator.datasets import BUNDLED_DATASET, load_dataset
from orchestrator.devices.local import LocalDevice
from orchestrator.devices.types import DeviceInfo, Inventory
from orchestrator.errors import ConfigError
from orchestrator.farm.run_json import RunJson
from orchestrator.farm.types import DeviceOutcome
from orchestrator.inventory import Selection
from orchestrator.models import ModelSummary
from orchestrator.run.plan import Inputs, plan
from orchestrator.run.types import PreviousRun, RunRequest

MODEL = ModelSummary(path=Path("/models/m.litertlm"), size_bytes=10, sha256="a" * 64, vision=True, audio=True,
                     max_context_tokens=4096)  # fmt: skip
DATASET = load_dataset(str(BUNDLED_DATASET))


class Phone:
    """A device as the plan sees it (constructors do no I/O; nothing here is called)."""

    kind, runner, backend, threads = "adb", "android", "cpu", None

    def __init__(self, name: str) -> None:
        self.name = name


def _inputs(*devices, previous: PreviousRun | None = None) -> Inputs:
    return Inputs(model=MODEL, inventory=Inventory(None, (), ()), dataset=DATASET, dataset_sha="d" * 64,
                  stand_ins={"*": ()}, selection=Selection(tuple(devices), (), ()), absent=(),
                  previous=previous)  # fmt: skip


HOSTS = (LocalDevice("host-a", threads=1), LocalDevice("host-b", threads=2))


def test_this_hosts_devices_share_one_lane_and_phones_run_beside_them():
    p = plan(RunRequest(limit=3), _inputs(*HOSTS, Phone("pixel")))
    assert p.lanes == (("host-a", "host-b"), ("pixel",))
    assert p.host_sharing.to_dict() == {"devices": ["host-a", "host-b"], "mode": "sequential"}
    assert [o.threads for o in p.options.values()] == [1, 2, None] and len(p.samples) == 3
    record = p.run_json("20260101-000000-abcd", "2026-01-01T00:00:00+00:00", {"cpus": 2}).to_dict()
    assert record["host_sharing"]["mode"] == "sequential" and record["devices"] == [
        "host-a",
        "host-b",
        "pixel",
    ]


def test_parallel_local_runs_every_device_in_its_own_lane_and_says_so():
    p = plan(RunRequest(limit=3, parallel_local=True, threads=4, max_num_tokens=512), _inputs(*HOSTS))
    assert p.lanes == (("host-a",), ("host-b",)) and p.host_sharing.mode == "parallel"
    assert {(o.threads, o.max_num_tokens) for o in p.options.values()} == {(4, 512)}  # the flags win
    assert p.request.flags()["parallel_local"] is True and p.request.flags()["max_num_tokens"] == 512


def test_one_host_device_is_no_sharing():
    p = plan(RunRequest(limit=1), _inputs(HOSTS[0], Phone("pixel")))
    assert p.host_sharing is None and p.lanes == (("host-a",), ("pixel",))
    assert "host_sharing" not in p.run_json("20260101-000000-abcd", "", {}).to_dict()


def _previous(model_sha: str, ids: list[str]) -> PreviousRun:
    record = {"run_id": "20260101-000000-abcd", "started_at": "t0", "devices": ["host-a", "gone-phone"],
              "model": {"sha256": model_sha}, "dataset": {"sha256": "d" * 64, "sample_ids": ids}}  # fmt: skip
    return PreviousRun.of(RunJson.from_dict(record), Path("/runs/20260101-000000-abcd"))


def test_a_resume_keeps_the_devices_of_the_first_run_and_refuses_another_model():
    ids = [s.id for s in DATASET.samples[:2]]
    p = plan(RunRequest(limit=2), _inputs(HOSTS[0], previous=_previous("a" * 64, ids)))
    assert p.report_devices == ("host-a", "gone-phone")  # a device not here now keeps its row
    with pytest.raises(ConfigError, match="model file differs") as e:
        plan(RunRequest(limit=2), _inputs(HOSTS[0], previous=_previous("b" * 64, ids)))
    assert e.value.where == "/runs/20260101-000000-abcd/run.json"
    with pytest.raises(ConfigError, match="sample selection differs"):
        plan(RunRequest(limit=3), _inputs(HOSTS[0], previous=_previous("a" * 64, ids)))


def test_the_exit_status_the_outcomes_earn():
    from orchestrator.run.finish import exit_status

    def out(name: str, code: int = 0) -> DeviceOutcome:
        return DeviceOutcome(name=name, kind="adb", error="x" if code else "", error_code=code)

    assert exit_status([out("a"), out("b")]) == 0
    assert exit_status([out("a", 3), out("b")]) == 3  # one device failed
    assert exit_status([out("a", 3), out("b")], covered={"a"}) == 0  # its stand-in finished for it
    assert exit_status([out("a", 4), out("b", 4)]) == 4  # the model, everywhere
    assert exit_status([out("a", 4), out("b")]) == 3
    assert exit_status([out("a", 3), out("b", 5)]) == 5  # the run folder: fix the disk, then --resume
    assert exit_status([out("a", 6), out("b", 6)]) == 6  # a failure's own code, when every device had it
    assert exit_status([out("a", 6), out("b", 7)]) == 3


def test_units_of_one_model_on_different_os_builds_are_refused_or_grouped_by_build_and_said():
    """Issue 45: two Pixel 8s alike but for their OS build are not identical (farm/shard.py identity):
    --units is refused naming each build; --shard runs them apart and says why before the run."""
    pixels = (Phone("pixel-a"), Phone("pixel-b"))
    infos = {p.name: DeviceInfo(name=p.name, kind="adb", model="Pixel 8", soc="Tensor G3", abi="arm64-v8a",
                                build=f"google/shiba/shiba:14/{b}/1:user/release-keys")
             for p, b in zip(pixels, ("AP1A.240505.004", "AP2A.240805.005"), strict=True)}  # fmt: skip
    inputs = replace(_inputs(*pixels), infos=infos)
    with pytest.raises(ConfigError) as e:
        plan(RunRequest(limit=3, units=True), inputs)
    refused = str(e.value)
    assert "OS build" in refused and "AP1A.240505.004 1: pixel-a; AP2A.240805.005 1: pixel-b" in refused
    sharded = plan(RunRequest(limit=3, shard=True), inputs)
    assert sharded.shards is not None and sharded.shards.groups == ()  # each runs every sample alone
    note = "Pixel 8: 2 devices on 2 OS builds, grouped by build"
    assert any(n.startswith(note) for n in sharded.notes)
    record = sharded.run_json("20260101-000000-abcd", "2026-01-01T00:00:00+00:00", {"cpus": 2}).to_dict()
    assert any(n.startswith(note) for n in record["notes"])
    same = replace(inputs, infos={n: replace(i, build=infos["pixel-a"].build) for n, i in infos.items()})
    assert [g.members for g in plan(RunRequest(limit=3, units=True), same).units] == [("pixel-a", "pixel-b")]
