"""Issue 24, "one run per phone": a second run on a device another live run holds is refused at once
with the holder's run id, pid and the fix; a lock whose run was killed is taken over with a note. Real
CLI, this host's device (its lock is the same code as a phone's or a board's: the Device protocol)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from .conftest import REPO, edgefarm, python_wrapper, results


def _inventory(tmp_path: Path) -> Path:
    inv = tmp_path / "devices.yaml"
    inv.write_text(f"devices:\n  - name: this-host\n    kind: local\n    workdir: {tmp_path / 'work'}\n"
                   f"    python: {python_wrapper(tmp_path)}\n")  # fmt: skip
    return inv


def _wait_for(path: Path, proc: subprocess.Popen, timeout_s: float = 300) -> None:
    end = time.monotonic() + timeout_s
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, f"{path} never appeared"
        time.sleep(0.2)


def test_a_second_run_on_a_held_device_is_refused_and_a_dead_holders_lock_is_taken_over(tmp_path: Path):
    inv = _inventory(tmp_path)
    holder = tmp_path / "work" / "run.lock" / "holder"
    flags = ("--devices", "local", "--inventory", str(inv), "--modality", "text", "--limit", "3",
             "--max-output-tokens", "4")  # fmt: skip
    env = {
        **os.environ,
        "COLUMNS": "200",
        "EDGEFARM_TEST_FAULTS": "SLOW=60",
    }  # run A sits on its first sample
    env.pop("EDGEFARM_INVENTORY", None)
    first = subprocess.Popen([sys.executable, "-m", "orchestrator", "run", *flags, "--out", str(tmp_path / "a")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=env)  # fmt: skip
    try:
        _wait_for(holder, first)
        run_a = next((tmp_path / "a").iterdir()).name
        assert f"run={run_a} pid={first.pid} " in holder.read_text()

        second = edgefarm("run", *flags, "--out", str(tmp_path / "b"), timeout=120)  # refused at once
        assert second.returncode == 3, second.stderr
        assert "Traceback" not in second.stderr
        said = " ".join(second.stderr.split())
        assert f"this-host is in use by run {run_a} (pid {first.pid} on " in said, said
        assert f"kill -INT {first.pid}" in said
        assert first.poll() is None  # the first run goes on, untouched
        assert f"run={run_a} pid={first.pid} " in holder.read_text()
    finally:
        first.send_signal(signal.SIGKILL)  # dies holding the lock
        first.communicate()
    assert holder.exists()

    third = edgefarm("run", *flags, "--out", str(tmp_path / "c"), env={"EDGEFARM_TEST_FAULTS": ""})
    assert third.returncode == 0, third.stderr
    said = " ".join(third.stderr.split())
    assert f"took over this-host's lock from run {run_a} (pid {first.pid} on " in said, said
    run_c = next((tmp_path / "c").iterdir())
    assert [r["status"] for r in results(run_c)] == ["ok"] * 3
    assert not holder.exists()  # released at the end


def test_a_lock_that_cannot_be_taken_refuses_the_device_naming_the_path(tmp_path: Path):
    """Issue 34: a `run.lock` that is a plain file made the take script answer NOWRITE and the session
    ran unlocked (two runs on one phone, both exit 0). Now the device is refused, naming the path and
    the fix; once the file is gone the run takes its lock and runs."""
    inv = _inventory(tmp_path)
    lock = tmp_path / "work" / "run.lock"
    lock.parent.mkdir(parents=True)
    lock.write_text("not a lock folder\n")
    flags = ("--devices", "local", "--inventory", str(inv), "--modality", "text", "--limit", "2",
             "--max-output-tokens", "4")  # fmt: skip
    p = edgefarm("run", *flags, "--out", str(tmp_path / "a"), timeout=300)
    said = " ".join(p.stderr.split())
    assert p.returncode == 3, said[-3000:]
    assert (
        f"this-host's one-run lock {lock} cannot be taken: something that is not a folder has its name"
        in said
    )
    assert f"fix: remove it (`rm {lock}` on this-host" in said and "Traceback" not in said
    run_a = next((tmp_path / "a").iterdir())
    assert not (run_a / "devices" / "this-host" / "results.jsonl").exists()  # nothing ran unlocked
    lock.unlink()
    q = edgefarm("run", *flags, "--out", str(tmp_path / "b"), timeout=300)
    assert q.returncode == 0, q.stderr[-3000:]
    assert not lock.exists()  # taken and released


def test_a_dead_holders_lock_that_cannot_be_removed_is_named(tmp_path: Path):
    """A lock left by a run that is gone, in a workdir where it cannot be removed (immutable): it was
    reported as "keeps changing hands" without its path; now its path, its dead holder and the fix."""
    from orchestrator.devices.lock import host_name, this_process

    inv = _inventory(tmp_path)
    work = tmp_path / "work"
    (work / "run.lock").mkdir(parents=True)
    me = this_process("x")  # this host and boot: the holder's pid is checked in /proc, and is not there
    (work / "run.lock" / "holder").write_text(
        f"run=20200101-000000-dead pid={2**22 + 7} host={host_name()} boot={me.boot} start=1\n"
    )
    chattr = subprocess.run(["chattr", "+i", str(work)], check=False, capture_output=True, text=True)
    assert chattr.returncode == 0, f"the test needs `chattr +i` (e2fsprogs) on {work}: {chattr.stderr}"
    try:
        p = edgefarm("run", "--devices", "local", "--inventory", str(inv), "--limit", "1",
                     "--out", str(tmp_path / "a"), timeout=300)  # fmt: skip
    finally:
        subprocess.run(["chattr", "-i", str(work)], check=True)
    said = " ".join(p.stderr.split())
    assert p.returncode == 3, said[-3000:]
    assert (
        f"this-host's one-run lock {work / 'run.lock'} cannot be taken: it was left by run 20200101-000000-dead"
        in said
    )
    assert "which is no longer running, and cannot be removed" in said and "keeps changing hands" not in said
    assert f"`rm -rf {work / 'run.lock'}` on this-host" in said
