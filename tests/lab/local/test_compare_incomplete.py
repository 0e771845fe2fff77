"""Issue 34 item 6: `edgefarm compare` against a run that is not whole, through the real CLI.

A run SIGKILLed half-way (no outcome, no report) and a run whose device failed were compared as if they
were whole: the failed device's missing rows read as a setting that differs ("backend: cpu in A, default
in B"), and with --allow-different the table said "no significant difference" on 0 common samples. Now
both are refused as an incomplete run, naming the device and what it lacks, even with --allow-different.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from .conftest import REPO, edgefarm, only_run_dir, python_wrapper

COMMON = ("--modality", "text", "--limit", "3", "--max-output-tokens", "8")


def _inventory(tmp: Path, name: str, python: str | None = None) -> Path:
    entry = {"name": "this-host", "kind": "local", "workdir": str(tmp / f"work-{name}")}
    if python:
        entry["python"] = python
    inv = tmp / f"{name}.yaml"
    inv.write_text(json.dumps({"devices": [entry]}))
    return inv


def _run(tmp: Path, name: str, python: str | None = None) -> tuple[subprocess.CompletedProcess, Path]:
    out = tmp / name
    p = edgefarm("run", "--devices", "local", "--inventory", str(_inventory(tmp, name, python)),
                 "--out", str(out), *COMMON)  # fmt: skip
    run_dir = only_run_dir(out)
    assert run_dir is not None, p.stderr[-3000:]
    return p, run_dir


def _half_written(tmp: Path) -> Path:
    """A run SIGKILLed after its first sample came back: run.json and a stream file, no outcome."""
    out = tmp / "half"
    env = dict(os.environ, EDGEFARM_TEST_FAULTS="SLOW=2", COLUMNS="200")
    env.pop("EDGEFARM_INVENTORY", None)
    inv = _inventory(tmp, "half", python_wrapper(tmp))
    proc = subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "run", "--devices", "local", "--inventory", str(inv),
         "--out", str(out), *COMMON],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            streams = list(out.glob("*/devices/this-host/results.stream.jsonl"))
            if streams and streams[0].read_text().strip():
                break
            assert proc.poll() is None, "the run ended before it could be killed half-way"
            time.sleep(0.1)
        else:
            raise AssertionError("no sample came back within 120 s")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    run_dir = only_run_dir(out)
    assert run_dir is not None and not (run_dir / "devices" / "this-host" / "outcome.json").exists()
    return run_dir


def _refused_as_incomplete(p: subprocess.CompletedProcess, folder: Path, lacks: str) -> None:
    run_id = folder.name
    said = " ".join(p.stderr.split())
    assert p.returncode == 2, p.stdout + p.stderr
    assert f"incomplete run {run_id}: this-host: {lacks}" in said, said
    assert f"edgefarm run --resume {folder}" in said and "Traceback" not in said
    assert "no significant difference" not in p.stdout and "backend:" not in said, p.stdout


def test_compare_refuses_a_half_written_run_and_a_failed_device_naming_what_is_missing(tmp_path: Path):
    whole_p, whole = _run(tmp_path, "whole")
    assert whole_p.returncode == 0, whole_p.stderr[-3000:]
    failed_p, failed = _run(tmp_path, "failed", python=str(tmp_path / "no-such-python"))
    assert failed_p.returncode != 0  # the device could not start its runner: nothing ran
    half = _half_written(tmp_path)

    for other, lacks in ((failed, "0 of 3 samples ("), (half, "0 of 3 samples (no outcome recorded)")):
        for allow in ((), ("--allow-different",)):
            _refused_as_incomplete(edgefarm("compare", str(whole), str(other), *allow), other, lacks)
            _refused_as_incomplete(edgefarm("compare", str(other), str(whole), *allow), other, lacks)

    # two whole runs still compare
    again_p, again = _run(tmp_path, "again")
    assert again_p.returncode == 0, again_p.stderr[-3000:]
    c = edgefarm("compare", str(whole), str(again))
    assert c.returncode == 0, c.stderr
    assert "on 3 common sample(s)" in c.stdout


def test_compare_never_gives_a_verdict_on_zero_common_samples(tmp_path: Path):
    """Two whole runs over different samples (--allow-different): nothing in common, refused."""
    a_p, a = _run(tmp_path, "a")
    out = tmp_path / "b"
    b_p = edgefarm("run", "--devices", "local", "--inventory", str(_inventory(tmp_path, "b")), "--out", str(out),
                   "--modality", "image", "--limit", "2", "--max-output-tokens", "8")  # fmt: skip
    b = only_run_dir(out)
    assert a_p.returncode == 0 and b_p.returncode == 0 and b is not None, b_p.stderr[-3000:]
    p = edgefarm("compare", str(a), str(b), "--allow-different")
    assert p.returncode == 2, p.stdout
    assert "no sample in common" in p.stderr and "nothing to compare" in p.stderr
    assert "no significant difference" not in p.stdout
