"""The full stamp of a phone's run, through the real CLI with the backend and threads overridden on the
command line (devices.yaml says gpu / 4 threads): every field says what the run actually used. The
settings given on the command line (threads, sample timeout, token cap, cooldown gate) are what the phone's
runner reports having given the runtime (its READY line, its result lines, the hook's wait): one settings
file carries them (android_runner/settings.py)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

from android_runner.settings import SETTINGS_FILE, RunnerSettings
from orchestrator.models import BUNDLED_MODEL, inspect_model

REPO = Path(__file__).resolve().parents[3]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_phone_stamp_with_backend_and_threads_from_the_command_line(adb_lab, tmp_path):
    inv = tmp_path / "devices.yaml"
    serial = adb_lab.serials["pixel8"]
    inv.write_text(
        f"devices:\n  - name: pixel-8\n    kind: adb\n    serial: '{serial}'\n    backend: gpu\n    threads: 4\n"
    )
    out = tmp_path / "runs"
    env = adb_lab.env(COLUMNS="200")
    env.pop("EDGEFARM_INVENTORY", None)
    p = subprocess.run([sys.executable, "-m", "orchestrator", "run", "--devices", "pixel-8", "--inventory", str(inv),
                        "--modality", "text", "--limit", "3", "--backend", "cpu", "--threads", "1", "--out", str(out),
                        "--sample-timeout", "61.5", "--max-output-tokens", "5", "--cooldown-c", "25",
                        "--cooldown-max-s", "1"], capture_output=True, text=True, timeout=300, env=env, cwd=REPO,
                       check=False)  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    (run_dir,) = [d for d in out.iterdir() if d.is_dir()]
    dev = run_dir / "devices" / "pixel-8"
    info = json.loads((dev / "device.json").read_text())["extra"]
    assert (info["backend"], info["threads"]) == ("cpu", 1)
    assert (info["inventory_backend"], info["inventory_threads"]) == ("gpu", 4)

    runner = json.loads((dev / "outcome.json").read_text())["runner"]
    native, lib = adb_lab.native_runner()
    assert runner["runner"] == "native" and runner["runner_sha256"] == _sha(native)
    assert runner["runtime_sha256"] == _sha(lib) and runner["runtime_version"].startswith(
        "litert-lm-api 0.18.1"
    )
    # issue 41: the phone's state before its run, in run.json's conditions: its background CPU (two reads of
    # its /proc/stat 0.2 s apart in its info, toybox's head and sleep), load average, temperature
    start = json.loads((run_dir / "run.json").read_text())["conditions"]["devices"]["pixel-8"]["start"]
    assert start["background_cores"] is not None and 0 <= start["background_cores"] <= (info.get("cores") or 64)
    assert start["load1"] is not None and start["temp_c"] is not None, start
    assert (info["background_cores"], info["load1"]) == (start["background_cores"], start["load1"])
    versions = json.loads((run_dir / "run.json").read_text())["device_versions"]["pixel-8"]
    assert versions["runner_sha256"] == _sha(native) and versions["runtime_sha256"] == _sha(lib)
    model = inspect_model(BUNDLED_MODEL)
    settings = runner["settings"]
    assert (settings["backend"], settings["threads"]) == ("cpu", 1)
    assert settings["model_sha256"] == model.sha256 == _sha(BUNDLED_MODEL)
    assert settings["max_num_tokens"] == model.max_context_tokens and settings["max_num_tokens"] > 0
    assert settings["max_num_tokens_from"].startswith("model metadata")
    assert settings["samplers"] and all("top_k" in s for s in settings["samplers"])
    assert settings["vision_backend"] == "cpu" and settings["cache"]
    # the battery fixture says level 87; the thermal capture's hottest TEMPERATURE is 36.75 (not vdroop's 3900)
    for phase in ("start", "end"):
        state = runner["state"][phase]
        assert (
            state["battery_pct"] == 87
            and state["max_temp_c"] == 36.75
            and state["thermal_status"] == 1  # 1 = light
        )
    job = adb_lab.device_root("pixel8") / "local/tmp/edgefarm/runs" / run_dir.name / "job"
    on_phone = RunnerSettings.parse((job / SETTINGS_FILE).read_text())
    assert (on_phone.threads, on_phone.sample_timeout_ms, on_phone.cooldown_mc) == (1, 61_500, 25_000)
    assert not (job / "runner_flags").exists() and not (job / "cooldown").exists()  # one file, no other channel
    # what the runner itself says it gave the runtime (its READY line), not what the host asked
    assert runner["applied_settings"] == {"backend": "cpu", "threads": 1, "max_num_tokens": 0,
                                          "sample_timeout_ms": 61_500}  # fmt: skip
    lines = [json.loads(x) for x in (dev / "raw" / "results.jsonl").read_text().splitlines() if x.strip()]
    assert len(lines) == 3 and all(line["max_output_tokens"] == 5 for line in lines)  # the runner's own word
    rows = [json.loads(x) for x in (dev / "results.jsonl").read_text().splitlines() if x.strip()]
    assert rows and all((r["backend"], r["threads"], r["max_output_tokens"]) == ("cpu", 1, 5) for r in rows)
    assert all(0 < r["decode_tokens"] <= 5 for r in rows)  # the runtime really stopped at the cap
    # the battery (between 25 and 35 C in the lab) is above the gate: the hook waited its 1 s each time
    assert all(1.0 <= r["cooldown_s"] <= 4.0 for r in rows), [r["cooldown_s"] for r in rows]
