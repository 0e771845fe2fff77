"""Ctrl-C and a killed edgefarm, through the real CLI on this host: the first Ctrl-C stops the runner,
keeps every finished sample, writes the reports and exits 130; a second leaves at once; a SIGKILLed
edgefarm leaves no runner behind; each then resumes with every sample exactly once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from orchestrator.interrupt import INTERRUPTED_EXIT

from .conftest import REPO, python_wrapper

LIMIT = 8


def _runners(job: Path) -> list[int]:
    """Live runner processes of this job's device: their command line names the runner in the
    device's work folder."""
    entry = str(job.parents[3] / "runner" / "entry.py").encode()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().split(b"\0")
            state = (proc / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if state != "Z" and entry in cmd:
            found.append(int(proc.name))
    return found


def _device_job(tmp_path: Path, run_dir: Path) -> Path:
    """The device's job folder in its work folder, where the runner works."""
    return tmp_path / "work" / "runs" / run_dir.name / "this-host" / "job"


def _start(tmp_path: Path, local_inventory) -> tuple[subprocess.Popen, Path, Path]:
    out = tmp_path / "runs"
    inv = local_inventory(python_wrapper(tmp_path))
    env = dict(os.environ, EDGEFARM_TEST_FAULTS="SLOW=0.4", COLUMNS="200")
    log = tmp_path / "run.log"
    with open(log, "w") as sink:  # the child keeps its own copy of the descriptor
        proc = subprocess.Popen(
            [sys.executable, "-m", "orchestrator", "run", "--devices", "local", "--inventory", str(inv),
             "--modality", "text", "--limit", str(LIMIT), "--out", str(out)],
            cwd=REPO, env=env, stdout=sink, stderr=subprocess.STDOUT,
        )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        streams = list(out.glob("*/devices/this-host/results.stream.jsonl"))
        if streams and len(streams[0].read_text().splitlines()) >= 2:
            return proc, streams[0].parents[2], log
        assert proc.poll() is None, log.read_text()[-3000:]
        time.sleep(0.05)
    raise AssertionError(f"no results within 60 s:\n{log.read_text()[-3000:]}")


def _resume_completes(run_dir: Path, tmp_path: Path) -> None:
    env = dict(os.environ, COLUMNS="200")
    p = subprocess.run([sys.executable, "-m", "orchestrator", "run", "--resume", str(run_dir)], check=False, cwd=REPO, env=env,
                       capture_output=True, text=True, timeout=120)  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    rows = [json.loads(x) for x in (run_dir / "devices" / "this-host" / "results.jsonl").read_text().splitlines()]
    ids = [r["id"] for r in rows]
    assert len(ids) == LIMIT == len(set(ids)) and all(r["status"] == "ok" for r in rows), rows
    raw = (_device_job(tmp_path, run_dir) / "results.jsonl").read_text().splitlines()
    assert len(raw) == LIMIT, raw  # the runner wrote each sample once: nothing ran twice


def test_first_ctrl_c_stops_the_runner_keeps_what_finished_and_writes_reports(tmp_path, local_inventory):
    proc, run_dir, log = _start(tmp_path, local_inventory)
    job = _device_job(tmp_path, run_dir)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    rc = proc.wait(timeout=30)
    took = time.monotonic() - t0
    text = log.read_text()
    assert rc == INTERRUPTED_EXIT, text[-3000:]
    assert took < 20, took  # stopped and reported, with room for a loaded 2-core box (the rows below show
    # that not every sample ran to the end)
    assert f"--resume {run_dir}" in text, text[-2000:]
    assert _runners(job) == []  # the runner was stopped, not left running
    rows = [json.loads(x) for x in (run_dir / "devices" / "this-host" / "results.jsonl").read_text().splitlines()]
    assert 2 <= len(rows) < LIMIT and all(r["status"] == "ok" for r in rows), rows  # no sample marked crashed
    assert (run_dir / "report.md").is_file() and (run_dir / "report.json").is_file()
    outcome = json.loads((run_dir / "devices" / "this-host" / "outcome.json").read_text())
    assert outcome["interrupted"] is True and outcome["error"] == ""
    _resume_completes(run_dir, tmp_path)


def test_second_ctrl_c_exits_at_once_and_the_run_still_resumes(tmp_path, local_inventory):
    proc, run_dir, log = _start(tmp_path, local_inventory)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=10) == INTERRUPTED_EXIT, log.read_text()[-3000:]
    deadline = time.monotonic() + 5  # the runner notices its closed stdin and exits by itself
    while _runners(_device_job(tmp_path, run_dir)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _runners(_device_job(tmp_path, run_dir)) == []
    _resume_completes(run_dir, tmp_path)


def test_a_killed_edgefarm_leaves_no_runner_and_resume_runs_nothing_twice(tmp_path, local_inventory):
    proc, run_dir, _log = _start(tmp_path, local_inventory)
    job = _device_job(tmp_path, run_dir)
    assert _runners(job), "the runner should be busy when edgefarm is killed"
    proc.kill()  # SIGKILL: no handler runs in edgefarm
    proc.wait(timeout=10)
    deadline = time.monotonic() + 5
    while _runners(job) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _runners(job) == [], "the runner outlived the edgefarm that started it"
    _resume_completes(run_dir, tmp_path)


def test_resume_stops_a_runner_of_the_same_job_that_is_still_alive(tmp_path, local_inventory):
    """The resume-side check, on its own: a runner of this job still busy (started outside any
    edgefarm, so nothing else stops it) is stopped before the resumed runner starts."""
    proc, run_dir, _log = _start(tmp_path, local_inventory)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == INTERRUPTED_EXIT
    job = _device_job(tmp_path, run_dir)
    runner_entry = next((tmp_path / "work").rglob("runner/entry.py"))
    stray = subprocess.Popen(  # the job folder holds the run's settings file (model, ...)
        [sys.executable, str(Path(__file__).parent / "faulty_runner.py"), str(runner_entry), "--job", str(job)],
        env=dict(os.environ, EDGEFARM_TEST_FAULTS="SLOW=5"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while not (job / "runner.pid").read_text().startswith(str(stray.pid)) and time.monotonic() < deadline:
            time.sleep(0.05)
        _resume_completes(run_dir, tmp_path)
        assert stray.wait(timeout=10) == -signal.SIGKILL  # stopped by the resumed runner
    finally:
        if stray.poll() is None:
            stray.kill()


CTRL_C_IN_REPORTS = """
import os, signal, sys
import orchestrator.run.finish as finish
write_reports = finish.write_reports
def ctrl_c_then_write(*args, **kwargs):  # a Ctrl-C while the run's reports are being written
    os.kill(os.getpid(), signal.SIGINT)
    return write_reports(*args, **kwargs)
finish.write_reports = ctrl_c_then_write
sys.argv = ["edgefarm", *sys.argv[1:]]
from orchestrator.cli import entry
entry()
"""


def test_a_ctrl_c_while_the_reports_are_written_still_writes_them_and_exits_130(tmp_path, local_inventory):
    inv = local_inventory()
    out = tmp_path / "runs"
    p = subprocess.run(
        [sys.executable, "-c", CTRL_C_IN_REPORTS, "run", "--devices", "local", "--inventory", str(inv),
         "--modality", "text", "--limit", "3", "--out", str(out)],
        check=False, cwd=REPO, env=dict(os.environ, COLUMNS="200"), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert p.returncode == INTERRUPTED_EXIT, p.stderr[-3000:]  # not click's "Aborted!" (exit 1)
    assert "Aborted" not in p.stderr and "Traceback" not in p.stderr, p.stderr[-3000:]
    (run_dir,) = out.iterdir()
    assert json.loads((run_dir / "report.json").read_text())["devices"], "the reports were written"
    run = json.loads((run_dir / "run.json").read_text())
    assert run["finished_at"] and run["versions"]["litert-lm-api"]
    assert f"--resume {run_dir}" in p.stderr
