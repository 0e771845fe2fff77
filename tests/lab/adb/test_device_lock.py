"""Issue 24 on a lab phone: two runs on one phone at once. Before: with a new model one died with
`internal error: unpack requires a buffer of 4 bytes` and a traceback; with the model there both ran
side by side, their latency polluted. Now the second is refused at once, naming the first run's id and
pid and the fix, and the first finishes untouched. Real CLI, real adb servers, an emulated phone."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from .test_farm_run import REPO, edgefarm, inventory

PHONE, LABEL = "google-pixel-8", "pixel8"


def test_a_second_run_on_a_busy_phone_is_refused_and_the_first_finishes(adb_lab, tmp_path):
    args = ["run", "--devices", PHONE, "--inventory", str(inventory(adb_lab, tmp_path)), "--modality", "text",
            "--limit", "3", "--max-output-tokens", "8", "--sample-timeout", "60"]  # fmt: skip
    edata = adb_lab.device_root(LABEL) / "local" / "tmp"
    faults = edata / "edgefarm-lab-faults"
    faults.parent.mkdir(parents=True, exist_ok=True)
    faults.write_text("sleep 2\n")  # a slow phone: the first run is still on it when the second starts
    holder = edata / "edgefarm" / "run.lock" / "holder"
    env = adb_lab.env(COLUMNS="200", EDGEFARM_PHONE_RUNNER="upstream")
    env.pop("EDGEFARM_INVENTORY", None)
    first = subprocess.Popen([sys.executable, "-m", "orchestrator", *args, "--out", str(tmp_path / "a")], cwd=REPO,
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not holder.exists():
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline, "the first run never took the phone"
            time.sleep(0.1)
        run_a = next((tmp_path / "a").iterdir()).name
        second = edgefarm(adb_lab, *args, "--out", str(tmp_path / "b"), timeout=120)
        assert first.poll() is None, (
            "the first run ended before the second was refused: the test proves nothing"
        )
        _out_a, err_a = first.communicate(timeout=300)
    finally:
        faults.unlink(missing_ok=True)
        if first.poll() is None:
            first.kill()
            first.wait()
    assert second.returncode == 3, second.stderr[-3000:]
    assert "Traceback" not in second.stderr and "internal error" not in second.stderr
    said = " ".join(second.stderr.split())
    assert f"{PHONE} is in use by run {run_a} (pid {first.pid} on " in said, said
    assert f"kill -INT {first.pid}" in said
    assert first.returncode == 0, err_a[-3000:]
    rows = [
        json.loads(x)
        for x in (tmp_path / "a" / run_a / "devices" / PHONE / "results.jsonl").read_text().splitlines()
    ]
    assert [r["status"] for r in rows] == ["ok"] * 3
    assert not holder.exists()  # released at the end of the run
