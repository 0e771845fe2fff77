"""devices/lock.py's pure parts: the holder line and whether its run is still there."""

from __future__ import annotations

import os
import subprocess
import sys

from orchestrator.devices.lock import STALE_S, Holder, holder_alive, parse_holder, this_process


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


def test_on_another_host_the_heartbeat_decides():
    me = this_process("20260101-000000-abcd")
    other = Holder("r", 4242, "farm-host-2", "b", "1")
    assert holder_alive(other, age_s=STALE_S - 1, me=me) and not holder_alive(other, age_s=STALE_S + 1, me=me)
