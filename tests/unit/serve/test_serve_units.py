"""Several backends per device in `edgefarm serve` (docs/serve.md): the run's matrix units (devices/units.py)
become the models, `pixel-8/cpu` and `pixel-8/gpu`, each with its own backend, its own session folder (a
matrix run's, `pixel-8@gpu`) and its device's one turn; one backend per device stays the plain serve."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from orchestrator.devices.adb import AdbDevice
from orchestrator.devices.local import LocalDevice
from orchestrator.devices.units import units_of
from orchestrator.devices_yaml import parse_inventory
from orchestrator.models import ModelSummary
from orchestrator.serve.app import model_object
from orchestrator.serve.run import ServeRequest, engines_for
from orchestrator.serve.session import ServeSession

REPO = Path(__file__).resolve().parents[3]
MODEL = ModelSummary(path=Path("/models/m.litertlm"), size_bytes=10, sha256="a" * 64, vision=False, audio=False,
                     max_context_tokens=4096)  # fmt: skip


def _engines(tmp_path: Path, devices, request: ServeRequest, entries=()):
    units = units_of(devices, request.backend, entries)
    session = ServeSession(tmp_path, MODEL, tuple(d.name for d in units), request.flags(), None)
    return session, engines_for(units, MODEL, request, session, lambda engine, row: None)


def test_cpu_gpu_makes_a_model_per_device_and_backend_with_its_folder_and_one_turn_per_device(tmp_path):
    devices = (AdbDevice("pixel-8", "S1"), AdbDevice("s24", "S2", backend="gpu"))
    session, engines = _engines(tmp_path, devices, ServeRequest(backend="cpu,gpu", threads=2))
    assert [e.id for e in engines] == ["pixel-8/cpu", "pixel-8/gpu", "s24/cpu", "s24/gpu"]
    listed = [model_object(e)["edgefarm"] for e in engines]
    assert [(m["device"], m["backend"], m["state"]) for m in listed] == [
        ("pixel-8", "cpu", "loading"), ("pixel-8", "gpu", "loading"), ("s24", "cpu", "loading"),
        ("s24", "gpu", "loading")]  # fmt: skip
    assert [e.opts.backend for e in engines] == ["cpu", "gpu", "cpu", "gpu"]
    assert {e.opts.threads for e in engines} == {2} and {e.opts.run_id for e in engines} == {session.run_id}
    assert [e.folder.name for e in engines] == ["pixel-8@cpu", "pixel-8@gpu", "s24@cpu", "s24@gpu"]
    assert session.record.devices == ("pixel-8@cpu", "pixel-8@gpu", "s24@cpu", "s24@gpu")
    pixel_cpu, pixel_gpu, s24_cpu, _ = engines
    assert pixel_cpu._lock is pixel_gpu._lock and pixel_cpu._lock is not s24_cpu._lock
    assert pixel_cpu.hold is pixel_gpu.hold and pixel_cpu.hold is not s24_cpu.hold  # one run lock per phone


def test_devices_yaml_backends_make_units_and_one_backend_is_the_plain_serve(tmp_path):
    inv = parse_inventory("devices:\n  - name: pixel-8\n    kind: adb\n    serial: S1\n    backends: [gpu, cpu]\n"
                          "  - name: s24\n    kind: adb\n    serial: S2\n", "devices.yaml")  # fmt: skip
    devices = (AdbDevice("pixel-8", "S1"), AdbDevice("s24", "S2"))
    _, engines = _engines(tmp_path / "a", devices, ServeRequest(), inv.entries)
    assert [e.id for e in engines] == ["pixel-8/gpu", "pixel-8/cpu", "s24/cpu"]  # s24 a unit too: its row
    assert [e.folder.name for e in engines] == ["pixel-8@gpu", "pixel-8@cpu", "s24@cpu"]
    _, engines = _engines(tmp_path / "b", devices, ServeRequest(backend="gpu"), inv.entries)  # --backend wins
    assert [(e.id, e.folder.name) for e in engines] == [("pixel-8/gpu", "pixel-8"), ("s24/gpu", "s24")]
    _, (host,) = _engines(tmp_path / "c", (LocalDevice(),), ServeRequest())
    assert (host.id, host.folder.name, model_object(host)["edgefarm"]["device"]) == (
        "this-host/cpu", "this-host", "this-host")  # fmt: skip


def test_a_word_that_is_not_a_backend_is_refused_with_exit_2():
    p = subprocess.run([sys.executable, "-m", "orchestrator", "serve", "--backend", "cpu,tpu", "--db", "none"],
                       cwd=REPO, capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert p.returncode == 2 and "'tpu' is not a backend" in p.stderr, p.stderr
