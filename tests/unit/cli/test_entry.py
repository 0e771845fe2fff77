"""The console script leaves as CPython does (threads joined, atexit run, streams flushed, status kept)."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SCRIPT = """
import atexit, sys, threading, time
from orchestrator import cli
atexit.register(lambda: print("atexit ran", flush=True))
# still running when the command is done, whatever the machine's load: it starts once the main thread ends
worker = threading.Thread(target=lambda: (threading.main_thread().join(), time.sleep(0.3), print("worker finished")))
worker.start()
sys.argv = ["edgefarm", *sys.argv[1:]]
cli.entry()
"""


def _entry(*args: str, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SCRIPT, *args], cwd=REPO, stdout=stdout, stderr=subprocess.PIPE,
                          text=True, timeout=60, check=False)  # fmt: skip


def test_a_command_exits_0_after_its_threads_and_atexit_handlers():
    p = _entry("--version")  # the worker's print is buffered (a pipe): it shows only if stdout is flushed
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["edgefarm, version 0.1.0", "worker finished", "atexit ran"]


def test_an_error_keeps_its_exit_status_and_message():
    from orchestrator.errors import ModelError

    p = _entry("run", "--devices", "local", "--model", "/nonexistent/model.litertlm")
    assert p.returncode == ModelError.exit_code == 4, p.stderr
    assert "error: model file not found: /nonexistent/model.litertlm" in p.stderr
    assert "Traceback" not in p.stderr


def test_a_click_error_through_the_console_entry_speaks_the_projects_voice():
    """The real entry (as `edgefarm` and `python -m orchestrator` run it): error + fix, exit 2, and the
    fix names `edgefarm`, whichever way it was started."""
    p = _entry("run", "--repeat", "0")
    assert p.returncode == 2, p.stderr
    assert p.stderr.splitlines() == [
        "error: --repeat: 0 is not in the range x>=1",
        "  fix: give --repeat a whole number at least 1 (see `edgefarm run --help`)",
    ]
