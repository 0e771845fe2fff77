"""Issue 34 item 7: a phone's /data fills up in the middle of a run (another app's download). The
phone's /data here is a real file system of its own size (a tmpfs mounted on the emulated phone's
data folder, so every write on the phone, the adb push and the runner's files alike, meets ENOSPC as
on a full phone); the test fills it once the first row has streamed back, then frees it.

The run says which phone, that its storage is full and the fix (free space, then `--resume`), keeps
the rows finished before (each once), and `--resume` finishes every sample once. Before: the native
runner's run went on and exited 0, a note "storage full?" among its outcome's notes, the rest of the
rows without their snapshots; the upstream binary's rows after the fill were recorded from cut-short
files."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .sandbox import PIXEL_8
from .server import AdbServer
from .test_farm_run import REPO

PHONE, LABEL, LIMIT = "google-pixel-8", "tight8", 5
REPEAT = {"native": 40, "upstream": 1}  # the native runner is quick: enough runs to be mid-run
DATA_BYTES = (
    200 * 1024 * 1024
)  # the phone's /data: room for a run (the lab runtime library is 131 MB) and a little more


def _rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.is_file() else []


def _runs(dev: Path) -> list[dict]:
    """Every run of the device's samples: the scored ones and --repeat's copies."""
    return _rows(dev / "results.jsonl") + _rows(dev / "repeats.jsonl")


def _fill(folder: Path) -> Path:
    """Another app takes every free byte of the phone's /data."""
    filler = folder / "filler.bin"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        for size in (1 << 20, 65536, 4096, 512, 1):
            block = b"\0" * size
            try:
                while True:
                    os.write(fd, block)
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
    finally:
        os.close(fd)
    return filler


@pytest.mark.parametrize("runner", ["native", "upstream"])
def test_a_phone_whose_data_fills_mid_run_says_so_keeps_its_rows_and_resume_finishes(
    adb_lab, tmp_path, runner
):
    if os.geteuid() != 0:
        pytest.fail("this story mounts a tmpfs as the phone's /data: run it as root (the lab's CI does)")
    data = tmp_path / "phones" / LABEL / "data"
    data.mkdir(parents=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DATA_BYTES},mode=0755", "edgefarm-lab-data", str(data)],
                   check=True)  # fmt: skip
    server = AdbServer(tmp_path / "farm-host").start()
    adb_lab.servers.append(server)
    try:
        lab_tmp = adb_lab.tmp
        adb_lab.tmp = tmp_path  # this phone's root (and its tmpfs /data) under this test's folder
        try:
            adb_lab.add_phone(LABEL, PIXEL_8, server=len(adb_lab.servers) - 1)
        finally:
            adb_lab.tmp = lab_tmp
        serial = adb_lab.serials[LABEL]
        inv = tmp_path / "devices.yaml"
        inv.write_text("devices: []\n")
        faults = data / "local" / "tmp" / "edgefarm-lab-faults"
        faults.write_text("sleep 1.5\n")  # the upstream stand-in: still busy when /data fills
        env = adb_lab.env(COLUMNS="250", ANDROID_ADB_SERVER_PORT=str(server.port))
        if runner == "upstream":
            env["EDGEFARM_PHONE_RUNNER"] = "upstream"
        env.pop("EDGEFARM_INVENTORY", None)
        out = tmp_path / "runs"
        args = ["run", "--devices", PHONE, "--inventory", str(inv), "--modality", "text", "--limit", str(LIMIT),
                "--repeat", str(REPEAT[runner]), "--max-output-tokens", "8", "--sample-timeout", "60",
                "--out", str(out)]  # fmt: skip
        proc = subprocess.Popen([sys.executable, "-m", "orchestrator", *args], cwd=REPO, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            while not _rows(next(out.glob("*/devices/*/results.stream.jsonl"), out / "none")):
                assert proc.poll() is None, proc.communicate()[1][-5000:]
                assert time.monotonic() < deadline, "no result streamed"
                time.sleep(0.1)
            filler = _fill(data / "local" / "tmp")
            _out, err = proc.communicate(timeout=300)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        said = " ".join(err.split())
        assert proc.returncode == 3, said[-4000:]  # the device failed: the run is not complete
        assert "Traceback" not in err
        assert f"{PHONE} failed" in said and "the phone's storage is full" in said, said[-4000:]
        assert f"adb -s {serial} shell df -h /data" in said and "--resume" in said, said[-4000:]
        (run_dir,) = list(out.iterdir())
        dev = run_dir / "devices" / PHONE
        outcome = json.loads((dev / "outcome.json").read_text())
        assert "the phone's storage is full" in outcome["error"], outcome["error"]
        print(f"{runner}: {outcome['error']}")  # the words, for the log
        kept = _runs(dev)
        total = LIMIT * REPEAT[runner]
        ids = [r["id"] for r in kept]
        assert 1 <= len(kept) < total and len(set(ids)) == len(ids), ids  # what finished, each once
        assert all(r["status"] == "ok" and r["output"] for r in kept), kept  # no row cut short by the fill
        assert f"{PHONE} failed:" in (run_dir / "report.md").read_text()

        filler.unlink()  # the user frees space; resume finishes the rest
        faults.unlink()
        p = subprocess.run([sys.executable, "-m", "orchestrator", *args, "--resume", str(run_dir)], cwd=REPO,
                           env=env, capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
        assert p.returncode == 0, p.stderr[-4000:]
        rows = _runs(dev)
        assert len(rows) == total == len({r["id"] for r in rows}), [r["id"] for r in rows]
        assert all(r["status"] == "ok" for r in rows), rows
        assert {r["id"]: r["output"] for r in rows if r["id"] in ids} == {r["id"]: r["output"] for r in kept}
    finally:
        phone = adb_lab.phones.pop(LABEL, None)
        if phone is not None:
            phone.vanish()
        adb_lab.owner.pop(adb_lab.serials.pop(LABEL, ""), None)
        server.stop()
        adb_lab.servers.remove(server)
        subprocess.run(["umount", "-l", str(data)], check=False)
