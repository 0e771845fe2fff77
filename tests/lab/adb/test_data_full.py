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
from collections.abc import Iterator
from contextlib import contextmanager
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


def _edgefarm(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "orchestrator", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=300, check=False)  # fmt: skip


@contextmanager
def _phone_with_data(adb_lab, tmp_path: Path, size: int) -> Iterator[tuple[Path, AdbServer]]:
    """The lab's Pixel 8 (LABEL) on its own adb server, its /data a tmpfs of `size` bytes; (its /data
    folder on this host, the server). Removed and unmounted after."""
    if os.geteuid() != 0:
        pytest.fail("this story mounts a tmpfs as the phone's /data: run it as root (the lab's CI does)")
    data = tmp_path / "phones" / LABEL / "data"
    data.mkdir(parents=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "edgefarm-lab-data", str(data)],
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
        yield data, server
    finally:
        phone = adb_lab.phones.pop(LABEL, None)
        if phone is not None:
            phone.vanish()
        adb_lab.owner.pop(adb_lab.serials.pop(LABEL, ""), None)
        server.stop()
        adb_lab.servers.remove(server)
        subprocess.run(["umount", "-l", str(data)], check=False)


@pytest.mark.parametrize("runner", ["native", "upstream"])
def test_a_phone_whose_data_fills_mid_run_says_so_keeps_its_rows_and_resume_finishes(
    adb_lab, tmp_path, runner
):
    with _phone_with_data(adb_lab, tmp_path, DATA_BYTES) as (data, server):
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
        p = _edgefarm(env, *args, "--resume", str(run_dir))
        assert p.returncode == 0, p.stderr[-4000:]
        rows = _runs(dev)
        assert len(rows) == total == len({r["id"] for r in rows}), [r["id"] for r in rows]
        assert all(r["status"] == "ok" for r in rows), [(r["id"], r["status"], r.get("error")) for r in rows]
        assert {r["id"]: r["output"] for r in rows if r["id"] in ids} == {r["id"]: r["output"] for r in kept}


def test_a_phone_with_room_for_the_model_but_not_the_runtime_library_is_refused_before_the_push(
    adb_lab, tmp_path
):
    """/data has room for the model and the margin but not for the ~130 MB runtime library still to push:
    doctor says storage is not ready and counts the library, and the run refuses the phone before it
    pushes anything. Before, the check counted only the model and media (ready), and the push failed
    halfway with the sync connection closed."""
    with _phone_with_data(adb_lab, tmp_path, 100 * 1024 * 1024) as (data, server):
        env = adb_lab.env(COLUMNS="250", ANDROID_ADB_SERVER_PORT=str(server.port))
        env.pop("EDGEFARM_INVENTORY", None)
        inv = tmp_path / "devices.yaml"
        inv.write_text("devices: []\n")
        p = _edgefarm(env, "doctor", "--devices", PHONE, "--inventory", str(inv), "--json")
        assert p.returncode == 3, p.stderr[-3000:]
        (dev,) = json.loads(p.stdout)["devices"]
        storage = next(c for c in dev["checks"] if c["need"] == "storage")
        assert not storage["ok"] and "needs" in storage["found"], storage
        needed = float(storage["found"].split("needs ")[1].split(" MB")[0])
        assert needed > 130, storage  # the library counted (the model is under 1 MB)
        out = tmp_path / "runs"
        p = _edgefarm(
            env, "run", "--devices", PHONE, "--inventory", str(inv), "--limit", "1", "--out", str(out)
        )
        said = " ".join(p.stderr.split())
        assert p.returncode == 3 and "needs" in said and "Traceback" not in said, said[-3000:]
        assert not (data / "local" / "tmp" / "edgefarm" / "lib").exists()  # nothing pushed
