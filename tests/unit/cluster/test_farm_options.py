"""Every option reaches a farm host's device as it reaches one of this controller's: the plan
resolves a `RemoteDevice`'s options from its farm host's devices.yaml pins (the command line wins),
the progress total counts --sustain's passes on both farms (one `DeviceJob.runs`), and an option
that means nothing on a cluster is refused by name. The same plan through both farms, rows and
report figures compared, is tests/lab/cluster/test_both_farms.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.cluster.controller import remote_device
from orchestrator.cluster.types import HostDevices, Pins
from orchestrator.datasets import BUNDLED_DATASET, load_dataset
from orchestrator.devices.types import DeviceInfo, Inventory
from orchestrator.errors import ConfigError
from orchestrator.farm.session import DeviceJob
from orchestrator.inventory import Selection
from orchestrator.jobs import JobOptions
from orchestrator.models import ModelSummary
from orchestrator.run.plan import Inputs, plan
from orchestrator.run.types import RunRequest

MODEL = ModelSummary(path=Path("/models/m.litertlm"), size_bytes=10, sha256="a" * 64, vision=True, audio=True,
                     max_context_tokens=4096)  # fmt: skip
DATASET = load_dataset(str(BUNDLED_DATASET))
H1 = HostDevices("h1", (DeviceInfo(name="pixel-8", kind="adb"), DeviceInfo(name="s24", kind="adb")), (),
                 pins={"pixel-8": Pins("gpu", 2)})  # fmt: skip


def _inputs(cluster: object = None) -> Inputs:
    devices = tuple(remote_device(H1, i, agent=None) for i in H1.infos)
    return Inputs(model=MODEL, inventory=Inventory(None, (), ()), dataset=DATASET, dataset_sha="d" * 64,
                  stand_ins={"*": ()}, selection=Selection(devices, (), ()), absent=(), previous=None,
                  cluster=cluster)  # fmt: skip


def test_a_farm_hosts_pins_set_its_devices_options_and_the_command_line_wins():
    p = plan(RunRequest(limit=2), _inputs())
    assert {n: (o.backend, o.threads) for n, o in p.options.items()} == {
        "pixel-8": ("gpu", 2),
        "s24": ("cpu", None),
    }
    p = plan(RunRequest(limit=2, backend="cpu", threads=4), _inputs())
    assert {(o.backend, o.threads) for o in p.options.values()} == {("cpu", 4)}


def test_the_progress_total_counts_every_sustain_pass_and_warm_up():
    p = plan(RunRequest(limit=3, sustain=4, warmup=1), _inputs())
    job = DeviceJob("pixel-8", DATASET, p.samples, MODEL, p.options["pixel-8"], JobOptions(), Path("d"))
    assert job.runs == 1 + 3 * 4 == len(job.items)
    assert [s.id.rsplit("@", 1)[-1] for s in job.items[-3:]] == ["s4"] * 3


def test_parallel_local_is_refused_by_name_on_a_cluster():
    with pytest.raises(ConfigError, match="--parallel-local --cluster"):
        plan(RunRequest(limit=2, parallel_local=True), _inputs(cluster=object()))
