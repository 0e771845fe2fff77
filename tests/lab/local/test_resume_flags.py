"""A resume keeps every flag the run recorded (issue 41), through the real CLI, the real runner and the
tiny model on this host: a run SIGKILLed after its first rows, then `edgefarm run --resume RUN` alone,
finishes exactly what was asked (every pass of every sample, once), and run.json still says what was
asked. A Ctrl-C'd run says what it kept in the unit it counts, and the resume runs exactly that much."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from orchestrator.interrupt import INTERRUPTED_EXIT
from orchestrator.measure import base_id

from .conftest import REPO, python_wrapper

LIMIT = 6


def _start(tmp_path: Path, local_inventory, *flags: str) -> tuple[subprocess.Popen, Path]:
    """The run started with a slowed runner (SLOW: a wait outside each measured sample) and its log."""
    out = tmp_path / "runs"
    inv = local_inventory(python_wrapper(tmp_path))
    env = dict(os.environ, EDGEFARM_TEST_FAULTS="SLOW=0.05", COLUMNS="200")
    log = open(tmp_path / "first.log", "w")  # noqa: SIM115 - the child keeps its own copy
    proc = subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "run", "--devices", "local", "--inventory", str(inv),
         "--limit", str(LIMIT), "--out", str(out), "--db", "none", *flags],
        cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    log.close()
    return proc, out


def _after_rows(proc: subprocess.Popen, out: Path, tmp_path: Path, rows: int = 3) -> Path:
    """The run folder once its device has streamed `rows` rows."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        streams = list(out.glob("*/devices/this-host/results.stream.jsonl"))
        if streams and len(streams[0].read_text().splitlines()) >= rows:
            return streams[0].parents[2]
        assert proc.poll() is None, (tmp_path / "first.log").read_text()[-3000:]
        time.sleep(0.02)
    raise AssertionError(f"no rows within 60 s:\n{(tmp_path / 'first.log').read_text()[-3000:]}")


def _resume(run_dir: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "EDGEFARM_TEST_FAULTS"} | {"COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "orchestrator", "run", "--resume", str(run_dir), "--db", "none"],
                           cwd=REPO, env=env, capture_output=True, text=True, timeout=180, check=False)  # fmt: skip


def _rows(run_dir: Path, name: str) -> list[dict]:
    path = run_dir / "devices" / "this-host" / name
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def _raw(tmp_path: Path, run_dir: Path) -> list[str]:
    """The runner's own results file in the device's work folder: every run it made, once each."""
    job = tmp_path / "work" / "runs" / run_dir.name / "this-host" / "job"
    return [json.loads(x)["id"] for x in (job / "results.jsonl").read_text().splitlines()]


@pytest.mark.parametrize(
    ("flags", "key", "value", "runs_per_sample", "warmups"),
    [
        (("--repeat", "20"), "repeat", 20, 20, 0),
        (("--warmup", "2"), "warmup", 2, 1, 2),
        (("--sustain", "2"), "sustain", 2, 2, 0),
        (("--fidelity",), "fidelity", True, 1, 0),
    ],
    ids=["repeat", "warmup", "sustain", "fidelity"],
)
def test_a_killed_run_resumed_keeps_its_flag_and_finishes_what_was_asked(
    tmp_path, local_inventory, flags, key, value, runs_per_sample, warmups
):
    proc, out = _start(tmp_path, local_inventory, *flags)
    run_dir = _after_rows(proc, out, tmp_path)
    proc.kill()  # SIGKILL: no handler runs, run.json holds only the run's start
    proc.wait(timeout=10)
    before = len(_raw(tmp_path, run_dir))
    p = _resume(run_dir)
    assert p.returncode == 0, p.stderr[-3000:]
    flag_text = " ".join(flags)
    assert f"resuming run {run_dir.name} with its recorded flags: " in p.stderr and flag_text in p.stderr, (
        p.stderr
    )
    assert json.loads((run_dir / "run.json").read_text())["flags"][key] == value
    rows, repeats = _rows(run_dir, "results.jsonl"), _rows(run_dir, "repeats.jsonl")
    assert len(rows) == LIMIT and all(r["status"] == "ok" for r in rows), rows
    per_sample = Counter(base_id(r["id"]) for r in rows + repeats)
    assert sorted(per_sample.values()) == [runs_per_sample] * LIMIT, per_sample  # every pass, once
    raw = _raw(tmp_path, run_dir)
    assert len(raw) == len(set(raw)) and before < len(raw), raw  # the runner ran nothing twice
    assert len([i for i in raw if "@warmup" not in i]) == LIMIT * runs_per_sample
    warm = _rows(run_dir, "warmup.jsonl")
    if warmups:  # the resumed session starts cold: it warms up again, numbered after the first's
        assert len(warm) >= warmups + 1 and len({r["id"] for r in warm}) == len(warm), warm
        assert "warm-up run(s) (not counted)" in p.stderr, p.stderr
    else:
        assert warm == []
    device = json.loads((run_dir / "report.json").read_text())["devices"][0]
    if runs_per_sample > 1:
        assert f"{LIMIT * runs_per_sample} runs" in device["figures_over"], device["figures_over"]
    if key == "sustain":
        assert sorted(r["sustain_pass"] for r in rows + repeats) == [1] * LIMIT + [2] * LIMIT
    if key == "fidelity":
        assert all(r.get("fidelity") for r in rows), rows  # each row scored the reference too


def test_ctrl_c_counts_runs_and_the_resume_runs_exactly_what_it_said_was_left(tmp_path, local_inventory):
    proc, out = _start(tmp_path, local_inventory, "--repeat", "5")
    run_dir = _after_rows(proc, out, tmp_path)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == INTERRUPTED_EXIT
    log = (tmp_path / "first.log").read_text()
    line = next(x for x in log.splitlines() if x.startswith("interrupted: ") and "--resume" in x)
    done = len(_rows(run_dir, "results.jsonl")) + len(_rows(run_dir, "repeats.jsonl"))
    assert line.startswith(f"interrupted: {done} of {LIMIT * 5} runs ({LIMIT} samples x 5 runs; "), line
    assert f"it runs the {LIMIT * 5 - done} runs left" in line, line
    over = json.loads((run_dir / "report.json").read_text())["devices"][0]["figures_over"]
    assert over.startswith(f"{done} of {LIMIT * 5} runs: "), over  # the partial report's figures say so
    p = _resume(run_dir)
    assert p.returncode == 0, p.stderr[-3000:]
    assert f"this-host: {done} of {LIMIT * 5} runs" in p.stderr, p.stderr
    assert f"this session runs the {LIMIT * 5 - done} runs left" in p.stderr, p.stderr
    assert f"{LIMIT * 5}/{LIMIT * 5} runs" in p.stderr, p.stderr  # the progress counts runs, not samples
    assert len(_raw(tmp_path, run_dir)) == LIMIT * 5


def test_a_resume_refuses_a_flag_it_cannot_carry(tmp_path, local_inventory):
    """A run.json recording a flag this edgefarm does not know: refused with the reason, nothing run."""
    proc, out = _start(tmp_path, local_inventory, "--repeat", "2")
    run_dir = _after_rows(proc, out, tmp_path, rows=1)
    proc.kill()
    proc.wait(timeout=10)
    record = json.loads((run_dir / "run.json").read_text())
    record["flags"]["batch_size"] = 8  # a flag of a newer edgefarm
    (run_dir / "run.json").write_text(json.dumps(record))
    p = _resume(run_dir)
    assert p.returncode == 2, p.stderr
    assert "error: " in p.stderr and "batch_size" in p.stderr and "fix: " in p.stderr, p.stderr
    assert "field 'flags'" in p.stderr, p.stderr
