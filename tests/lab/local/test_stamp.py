"""The full stamp of a board/host run (the Python runner), through the real CLI with the backend and
threads overridden on the command line: each field says what the run used."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import litert_lm

from orchestrator.models import BUNDLED_MODEL, inspect_model

from .conftest import edgefarm, results


def test_host_stamp_with_backend_and_threads_from_the_command_line(tmp_path: Path):
    inv = tmp_path / "devices.yaml"
    entry = {
        "name": "this-host",
        "kind": "local",
        "workdir": str(tmp_path / "work"),
        "backend": "gpu",
        "threads": 2,
    }
    inv.write_text(json.dumps({"devices": [entry]}))
    out = tmp_path / "runs"
    p = edgefarm("run", "--devices", "local", "--inventory", str(inv), "--out", str(out), "--modality", "text",
                 "--limit", "2", "--backend", "cpu", "--threads", "1")  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    (run_dir,) = [d for d in out.iterdir() if d.is_dir()]
    dev = run_dir / "devices" / "this-host"
    info = json.loads((dev / "device.json").read_text())["extra"]
    assert (info["backend"], info["threads"], info["inventory_backend"], info["inventory_threads"]) == (
        "cpu", 1, "gpu", 2)  # fmt: skip
    runner = json.loads((dev / "outcome.json").read_text())["runner"]
    lib = Path(litert_lm.__file__).parent / "liblitert-lm.so"
    assert runner["runtime_version"] == "0.18.1" and runner["runtime"] == "litert-lm-api"
    assert Path(runner["runtime_lib"]) == lib
    assert runner["runtime_sha256"] == hashlib.sha256(lib.read_bytes()).hexdigest()
    assert len(runner["runner_sha256"]) == 64
    versions = json.loads((run_dir / "run.json").read_text())["device_versions"]["this-host"]
    assert versions == {
        k: runner[k] for k in ("runner", "runner_sha256", "runtime", "runtime_version", "runtime_sha256")
    }
    settings = runner["settings"]
    model = inspect_model(BUNDLED_MODEL)
    assert (settings["backend"], settings["threads"]) == ("cpu", 1)
    assert settings["max_num_tokens"] == model.max_context_tokens and settings["model_sha256"] == model.sha256
    rows = results(run_dir)
    assert all((r["backend"], r["threads"]) == ("cpu", 1) for r in rows)
    # start/end state: what the first sample saw before and the last one after (this host has no
    # thermal zone: then only the CPU clock, or nothing, never a made-up temperature)
    first, last = rows[0]["thermal_before"], rows[-1]["thermal_after"]
    assert runner["state"]["start"] == ({k: v for k, v in first.items() if k == "cpu_mhz"} if first else None)
    assert runner["state"]["end"] == ({k: v for k, v in last.items() if k == "cpu_mhz"} if last else None)
