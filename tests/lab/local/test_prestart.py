"""This host's runner started early (`runners.prestart_runners`), on the real runtime and the tiny model:
the engine loads while the run is prepared, the session hands it the job, nothing is pushed or
loaded twice; a runner nobody takes is ended; one started with other engine settings is replaced;
and the runner's own `--job-from-stdin` protocol."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from android_runner.contract import JobItem, JobPart, read_results, write_jsonl
from android_runner.litert_runner import STOPPED_EXIT
from orchestrator.datasets import load_dataset
from orchestrator.devices.local import LocalDevice
from orchestrator.jobs import JobOptions
from orchestrator.models import inspect_model
from orchestrator.runners.base import RunOptions
from orchestrator.runners.python_runner import _EARLY, EARLY_NOTE, PythonRunner, claim_early_runner
from orchestrator.scoring import SCORERS
from orchestrator.session import Progress, run_device

from .conftest import BUNDLED, REPO, TINY_MM, edgefarm


def _live_runners(work: Path) -> list[int]:
    """Live processes running the runner of the device whose work folder is `work`."""
    entry = str(work / "runner" / "entry.py").encode()
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmd = (proc / "cmdline").read_bytes().split(b"\0")
            state = (proc / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except (OSError, ValueError):
            continue
        if proc.name.isdigit() and state != "Z" and entry in cmd:
            found.append(int(proc.name))
    return found


def _outcome(run_dir: Path) -> dict:
    return json.loads((run_dir / "devices" / "this-host" / "outcome.json").read_text())


def test_a_local_run_takes_the_runner_started_early_and_loads_and_pushes_once(tmp_path, local_inventory):
    inv, out = local_inventory(), tmp_path / "runs"
    for _ in range(2):
        p = edgefarm("run", "--devices", "local", "--inventory", str(inv), "--out", str(out), "--modality", "text",
                     "--limit", "3")  # fmt: skip
        assert p.returncode == 0, p.stderr[-3000:]
    runs = [d for d in out.iterdir() if d.is_dir()]
    for run_dir in runs:
        outcome = _outcome(run_dir)
        assert EARLY_NOTE in outcome["notes"], outcome["notes"]
        assert outcome["model_loads"] == 1 and outcome["error"] == ""
        rows = list(read_results(str(run_dir / "devices" / "this-host" / "results.jsonl")))
        assert [r.status for r in rows] == ["ok"] * 3
        assert (
            run_dir / "devices" / "this-host" / "raw" / "runner.log"
        ).is_file()  # logged once it had its job
    # the early start pushed the model for the first run (counted there), and nothing for the second
    # (two runs in one second: their folder names do not say which came first)
    pushes = sorted(
        (_outcome(d)["model_push"]["files"], _outcome(d)["model_push"]["files_skipped"]) for d in runs
    )
    assert pushes == [(0, 1), (1, 0)]
    assert _live_runners(tmp_path / "work") == []


def test_a_run_that_fails_before_its_devices_ends_the_runner_started_early(tmp_path, local_inventory):
    inv = local_inventory()
    p = edgefarm("run", "--devices", "local", "--inventory", str(inv), "--out", str(tmp_path / "runs"),
                 "--dataset", str(tmp_path / "no-such-dataset"))  # fmt: skip
    assert p.returncode != 0 and "no-such-dataset" in p.stderr, p.stderr[-2000:]
    assert (tmp_path / "work" / "runner" / "entry.py").is_file()  # it was started: it staged its runner
    assert _live_runners(tmp_path / "work") == []  # and ended with the run, not left loading or waiting
    assert not (tmp_path / "runs").exists()  # a bad dataset still fails before any run folder exists


def test_an_early_runner_with_other_engine_settings_is_replaced(tmp_path):
    device = LocalDevice(workdir=tmp_path / "work", python=sys.executable)
    model = inspect_model(TINY_MM)
    assert PythonRunner(sys.executable).prestart(device, model, RunOptions(run_id=""))
    early = _EARLY[device.name].process
    dataset = load_dataset(str(BUNDLED))
    samples = [s for s in dataset.samples if s.modality == "text"][:2]
    opts = RunOptions(run_id="r1", threads=1)  # the engine the run asks for differs: --threads 1
    outcome = run_device(device, dataset, samples, model, opts, JobOptions(max_output_tokens=8, override=True),
                         tmp_path / "dev", Progress(total=2), clock=time.monotonic,
                         score=SCORERS.get(dataset.format).score)  # fmt: skip
    assert outcome.error == "" and [r.status for r in outcome.results] == ["ok", "ok"]
    assert EARLY_NOTE not in outcome.notes and outcome.model_loads == 1
    assert early.proc.wait(timeout=10) is not None  # the early one was ended, a new one ran the job
    assert claim_early_runner(device.name) is None
    assert _live_runners(tmp_path / "work") == []


def _start_runner(tmp_path: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(REPO / "android_runner" / "entry.py"), "--model", str(TINY_MM), "--cache-dir",
         str(tmp_path / "cache"), "--modalities", "text", "--exit-on-stdin-eof", "--job-from-stdin"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip


def test_the_runner_takes_its_job_from_stdin_after_loading(tmp_path):
    job = tmp_path / "job"
    job.mkdir()
    items = [
        JobItem(id=i, turns=((JobPart("text", text="hello"),),), max_output_tokens=4) for i in ("a", "b")
    ]
    write_jsonl(str(job / "job.jsonl"), items)
    runner = _start_runner(tmp_path)
    runner.stdin.write(json.dumps(["--job", str(job), "--sample-timeout-s", "60"]) + "\n")
    runner.stdin.flush()
    lines = []  # stdin stays open until DONE: a runner whose host is gone stops at once
    for line in runner.stdout:
        lines.append(line)
        if line.startswith("EDGEFARM DONE"):
            break
    out = "".join(lines)
    assert runner.wait(timeout=60) == 0, out
    runner.stdin.close()
    kinds = [ln.split(" ", 2)[1] for ln in out.splitlines() if ln.startswith("EDGEFARM ")]
    assert kinds == ["READY", "BEGIN", "RESULT", "BEGIN", "RESULT", "DONE"], out
    ready = json.loads(next(ln for ln in out.splitlines() if " READY " in ln).split(" ", 2)[2])
    assert ready["pending"] == 2 and ready["runtime_version"] == "0.18.1"
    assert [r.status for r in read_results(str(job / "results.jsonl"))] == ["ok", "ok"]
    pid, start = (job / "runner.pid").read_text().split()
    assert int(pid) == runner.pid and start.isdigit()  # the pid file names the process and its start time


def test_the_runner_stops_when_the_host_goes_before_the_job_or_sends_nonsense(tmp_path):
    for line in ("", "not json\n", '{"job": "x"}\n'):
        runner = _start_runner(tmp_path)
        out, _ = runner.communicate(line, timeout=120)  # then stdin closes
        assert runner.returncode == STOPPED_EXIT, (line, out)
        assert " READY " not in out


def test_a_runner_started_early_needs_its_cache_folder_named():
    """Before its job it has no job folder to default the runtime's cache to: --cache-dir is required."""
    p = subprocess.run(
        [sys.executable, str(REPO / "android_runner" / "entry.py"), "--model", str(TINY_MM), "--job-from-stdin"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert p.returncode == 2 and "--cache-dir" in p.stderr, p.stderr
