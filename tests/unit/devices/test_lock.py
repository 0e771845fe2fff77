"""devices/lock.py: the holder line, whether its run is still there, a holder line being written."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from orchestrator.devices.local import LocalDevice
from orchestrator.devices.lock import (
    LOCK_DIR,
    STALE_S,
    WRITING_WAIT_S,
    DeviceBusy,
    Holder,
    acquire,
    holder_alive,
    parse_holder,
    this_process,
)


def test_a_holder_line_round_trips_and_junk_is_no_holder():
    me = this_process("20260101-000000-abcd")
    assert parse_holder(me.line()) == me and me.pid == os.getpid() and me.start
    assert parse_holder("") is None and parse_holder("pid=12a run=x") is None


def test_on_this_host_a_holder_is_alive_only_with_its_pid_and_start_time():
    me = this_process("20260101-000000-abcd")
    assert holder_alive(me, age_s=10 * STALE_S, me=me)  # a live process: its age does not matter
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    gone = Holder("r", child.pid, me.host, me.boot, me.start)
    assert not holder_alive(gone, age_s=0, me=me)  # dead (or a recycled pid with another start time)
    recycled = Holder("r", os.getpid(), me.host, me.boot, str(int(me.start) + 1))
    assert not holder_alive(recycled, age_s=0, me=me)
    rebooted = Holder("r", os.getpid(), me.host, "another-boot", me.start)
    assert holder_alive(rebooted, age_s=0, me=me) and not holder_alive(rebooted, age_s=STALE_S + 1, me=me)


def test_a_killed_holder_not_yet_reaped_holds_nothing():
    """A SIGKILLed edgefarm is a zombie until its parent reaps it: its /proc entry is still there, with
    its start time, but it runs nothing; `--resume` right after `kill -9` takes its lock over."""
    me = this_process("20260101-000000-abcd")
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        stat = Path(f"/proc/{child.pid}/stat")  # state is field 3, the start time field 22
        holder = Holder("r", child.pid, me.host, me.boot, stat.read_text().rsplit(")", 1)[-1].split()[19])
        assert holder_alive(holder, age_s=0, me=me)
        child.kill()
        deadline = time.monotonic() + 10
        while stat.read_text().rsplit(")", 1)[-1].split()[0] != "Z":
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert not holder_alive(holder, age_s=0, me=me)  # a zombie: not reaped (no wait() yet)
    finally:
        child.kill()
        child.wait()


def test_on_another_host_the_heartbeat_decides():
    me = this_process("20260101-000000-abcd")
    other = Holder("r", 4242, "farm-host-2", "b", "1")
    assert holder_alive(other, age_s=STALE_S - 1, me=me) and not holder_alive(other, age_s=STALE_S + 1, me=me)


def test_a_lock_whose_holder_is_still_being_written_is_looked_at_again(tmp_path):
    """Devices sharing one workdir in one run take its lock at once: one finds the folder made and its
    holder line not yet written, and must look again (it then finds its own process), not refuse."""
    device = LocalDevice(workdir=tmp_path / "work")
    me = this_process("20260101-000000-abcd")
    lock = tmp_path / "work" / LOCK_DIR
    lock.mkdir(parents=True)
    (lock / "holder").write_text("")
    writer = threading.Timer(WRITING_WAIT_S / 2, lambda: (lock / "holder").write_text(me.line() + "\n"))
    writer.start()
    try:
        assert acquire(device, me) == (True, "")
    finally:
        writer.join()
    (lock / "holder").write_text("")  # never written: refused with the reason, after looking again
    with pytest.raises(DeviceBusy, match="has no holder yet"):
        acquire(device, me)
