"""A backend matrix run (issue 44, docs/matrix.md): every device as its device x backend units, a phone's
units one lane (one backend at a time on it), the units' own options; `backends:` in devices.yaml with
its line; `--backend` takes a comma list (and a resume reads it back through the same type)."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from orchestrator.cli.options import BackendList
from orchestrator.datasets import BUNDLED_DATASET, load_dataset
from orchestrator.devices.local import LocalDevice
from orchestrator.devices.types import Inventory
from orchestrator.devices.units import as_unit, job_folder, parse_backends, split_unit, unit_name
from orchestrator.devices_yaml import parse_inventory
from orchestrator.errors import ConfigError
from orchestrator.farm.rundir import device_folder
from orchestrator.inventory import Selection
from orchestrator.models import ModelSummary
from orchestrator.run.plan import Inputs, plan
from orchestrator.run.types import RunRequest

MODEL = ModelSummary(path=Path("/models/m.litertlm"), size_bytes=10, sha256="a" * 64, vision=True, audio=True,
                     max_context_tokens=4096)  # fmt: skip
DATASET = load_dataset(str(BUNDLED_DATASET))
HOSTS = (LocalDevice("host-a", threads=1), LocalDevice("host-b", threads=2))


class Phone:
    """A device as the plan sees it (constructors do no I/O; nothing here is called)."""

    kind, runner, backend, threads, on_progress = "adb", "android", "cpu", None, None

    def __init__(self, name: str) -> None:
        self.name = name


def _inputs(*devices, entries=()) -> Inputs:
    return Inputs(model=MODEL, inventory=Inventory(None, (), tuple(entries)), dataset=DATASET, dataset_sha="d" * 64,
                  stand_ins={"*": ()}, selection=Selection(tuple(devices), (), ()), absent=(), previous=None)  # fmt: skip


def test_cpu_gpu_makes_a_unit_per_device_and_backend_each_phone_one_lane():
    p = plan(RunRequest(limit=2, backend="cpu,gpu"), _inputs(Phone("pixel-8"), Phone("s24")))
    assert [d.name for d in p.devices] == ["pixel-8@cpu", "pixel-8@gpu", "s24@cpu", "s24@gpu"]
    assert p.lanes == (("pixel-8@cpu", "pixel-8@gpu"), ("s24@cpu", "s24@gpu"))
    assert {n: o.backend for n, o in p.options.items()} == {
        "pixel-8@cpu": "cpu", "pixel-8@gpu": "gpu", "s24@cpu": "cpu", "s24@gpu": "gpu"}  # fmt: skip
    assert p.report_devices == tuple(d.name for d in p.devices)
    assert p.request.flags()["backend"] == "cpu,gpu"  # run.json: a resume runs the same matrix


def test_this_hosts_units_all_run_one_after_another():
    p = plan(RunRequest(limit=1, backend="cpu,gpu"), _inputs(*HOSTS, Phone("pixel")))
    assert p.lanes[0] == ("host-a@cpu", "host-a@gpu", "host-b@cpu", "host-b@gpu")
    assert p.lanes[1] == ("pixel@cpu", "pixel@gpu") and p.host_sharing.mode == "sequential"


def test_one_backend_is_the_plain_run_and_devices_yaml_backends_make_a_matrix():
    p = plan(RunRequest(limit=1, backend="gpu"), _inputs(Phone("pixel-8")))
    assert [d.name for d in p.devices] == ["pixel-8"] and p.options["pixel-8"].backend == "gpu"
    entries = ({"name": "pixel-8", "kind": "adb", "backends": ["gpu", "cpu"]},)
    p = plan(
        RunRequest(limit=1), _inputs(Phone("pixel-8"), Phone("s24"), entries=entries)
    )  # s24 has one backend: a unit too, so the matrix has its row
    assert [d.name for d in p.devices] == ["pixel-8@gpu", "pixel-8@cpu", "s24@cpu"]


def test_a_matrix_with_shard_is_refused_by_name():
    with pytest.raises(ConfigError, match="--shard") as e:
        plan(RunRequest(limit=1, backend="cpu,gpu", shard=True), _inputs(Phone("a"), Phone("b")))
    assert "fix:" in str(e.value)


def test_a_unit_shares_its_device_but_names_its_own_folder():
    host = LocalDevice("host-a", threads=1)
    unit = as_unit(host, "gpu")
    assert (unit.name, unit.backend, unit.workdir, host.name, host.backend) == (
        "host-a@gpu", "gpu", host.workdir, "host-a", host.backend)  # fmt: skip
    assert split_unit("pixel-8@npu") == ("pixel-8", "npu") and split_unit("pixel-8") == ("pixel-8", "")
    assert unit_name("a", "cpu") == "a@cpu" and job_folder("a@gpu") == "job@gpu" and job_folder("a") == "job"
    assert device_folder(Path("/r"), "pixel-8@gpu") == Path("/r/devices/pixel-8@gpu")


def test_backend_lists_are_parsed_in_order_once_and_bad_words_named():
    assert parse_backends("GPU, cpu,gpu") == ("gpu", "cpu") and parse_backends(None) == ()
    with pytest.raises(ValueError, match="'tpu' is not a backend"):
        parse_backends("cpu,tpu")
    t = BackendList()
    assert t.convert("cpu,gpu,npu", None, None) == "cpu,gpu,npu"
    with pytest.raises(click.BadParameter):
        t.convert("cpu,vulkan", None, None)


def test_devices_yaml_backends_are_checked_with_their_line():
    ok = parse_inventory(
        "devices:\n  - name: p\n    kind: adb\n    serial: X1\n    backends: [cpu, gpu]\n", "d.yaml"
    )
    assert ok.entries[0]["backends"] == ["cpu", "gpu"]
    for text, said in (
        ("    backends: [cpu, tpu]\n", "d.yaml:5 devices[0].backends[1]"),
        ("    backends: [gpu, gpu]\n", "d.yaml:5 devices[0].backends"),
        ("    backends: []\n", "d.yaml:5 devices[0].backends"),
        (
            "    backend: gpu\n    backends: [cpu, gpu]\n",
            "d.yaml:6 devices[0].backends: `backend` and `backends`",
        ),
    ):
        with pytest.raises(ConfigError) as e:
            parse_inventory("devices:\n  - name: p\n    kind: adb\n    serial: X1\n" + text, "d.yaml")
        assert said in str(e.value), str(e.value)
