"""`stop_earlier_runner`: a runner of the same job still alive is stopped before a resumed one starts.
runner.pid names the process by pid and start time, so a runner started early (whose command line
names no job) is found, and a process that merely reuses the pid is left alone."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from android_runner.litert_runner import PID_FILE, STARTTIME_FIELD, _stat_field, stop_earlier_runner


def _sleeper() -> subprocess.Popen:
    """A process whose command line says entry.py (as a runner's does) but names no job; returned
    once it has exec'd (until then /proc shows the parent's command line)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "entry.py"])
    deadline = time.monotonic() + 10
    while b"entry.py" not in Path(f"/proc/{proc.pid}/cmdline").read_bytes() and time.monotonic() < deadline:
        time.sleep(0.005)
    return proc


def test_a_live_runner_named_by_pid_and_start_time_is_stopped(tmp_path: Path):
    proc = _sleeper()
    try:
        (tmp_path / PID_FILE).write_text(f"{proc.pid} {_stat_field(proc.pid, STARTTIME_FIELD)}\n")
        assert stop_earlier_runner(tmp_path) == proc.pid
        assert proc.wait(timeout=10) == -9
    finally:
        proc.kill()


def test_a_process_reusing_the_pid_is_left_alone(tmp_path: Path):
    proc = _sleeper()
    try:
        other_start = (
            int(_stat_field(proc.pid, STARTTIME_FIELD)) - 1
        )  # the runner that wrote it started earlier
        (tmp_path / PID_FILE).write_text(f"{proc.pid} {other_start}\n")
        assert stop_earlier_runner(tmp_path) is None
        (tmp_path / PID_FILE).write_text(
            f"{proc.pid}\n"
        )  # an old pid file: the job must be on its command line
        assert stop_earlier_runner(tmp_path) is None
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


def test_no_pid_file_or_a_dead_pid_stops_nothing(tmp_path: Path):
    assert stop_earlier_runner(tmp_path) is None
    proc = _sleeper()
    proc.kill()
    proc.wait()
    (tmp_path / PID_FILE).write_text(f"{proc.pid} 1\n")
    assert stop_earlier_runner(tmp_path) is None
