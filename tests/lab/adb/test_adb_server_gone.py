"""Issue 24: `adb kill-server` in the middle of a run was reported as a lost connection, as if the
cable had been pulled. Now the run says the adb server is gone, with the command that restarts it on
its own port; once it is back, `--resume` finishes the run. A farm host of its own (a real adb server
the test may kill) with one emulated phone; the real CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from .sandbox import PIXEL_8
from .server import AdbServer
from .test_farm_run import REPO

PHONE, LABEL, LIMIT = "google-pixel-8", "spare8", 4


def _rows(path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.is_file() else []


def test_a_killed_adb_server_is_named_with_the_restart_command_and_resume_finishes(adb_lab, tmp_path):
    server = AdbServer(tmp_path / "farm-host").start()
    adb_lab.servers.append(server)
    phone = adb_lab.add_phone(LABEL, PIXEL_8, server=len(adb_lab.servers) - 1)
    inv = tmp_path / "devices.yaml"
    inv.write_text("devices: []\n")
    faults = adb_lab.device_root(LABEL) / "local" / "tmp" / "edgefarm-lab-faults"
    faults.write_text("sleep 1.5\n")  # still busy when the server goes
    env = adb_lab.env(
        COLUMNS="200", EDGEFARM_PHONE_RUNNER="upstream", ANDROID_ADB_SERVER_PORT=str(server.port)
    )
    env.pop("EDGEFARM_INVENTORY", None)
    out = tmp_path / "runs"
    args = ["run", "--devices", PHONE, "--inventory", str(inv), "--modality", "text", "--limit", str(LIMIT),
            "--max-output-tokens", "8", "--sample-timeout", "60", "--out", str(out)]  # fmt: skip
    try:
        proc = subprocess.Popen([sys.executable, "-m", "orchestrator", *args], cwd=REPO, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            while not _rows(next(out.glob("*/devices/*/results.stream.jsonl"), out / "none")):
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "no result streamed"
                time.sleep(0.1)
            server.adb("kill-server")  # what a user types on the farm host
            _out, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == 3, err[-3000:]
        said = " ".join(err.split())
        assert "Traceback" not in err
        assert (
            f"the adb server 127.0.0.1:{server.port} is gone (stopped by `adb kill-server`, or it crashed)"
            in said
        ), said
        assert f"restart it: `adb -P {server.port} start-server`" in said and "--resume" in said

        faults.unlink()
        server.start()  # the same port and home: the farm host's server is back
        server.connect(phone)
        run_dir = next(out.iterdir())
        p = subprocess.run([sys.executable, "-m", "orchestrator", *args, "--resume", str(run_dir)], cwd=REPO,
                           env=env, capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
        assert p.returncode == 0, p.stderr[-3000:]
        rows = _rows(run_dir / "devices" / PHONE / "results.jsonl")
        assert len(rows) == LIMIT and all(r["status"] == "ok" for r in rows), rows
    finally:
        adb_lab.phones.pop(LABEL).vanish()
        adb_lab.owner.pop(adb_lab.serials.pop(LABEL, ""), None)
        server.stop()
        adb_lab.servers.remove(server)
