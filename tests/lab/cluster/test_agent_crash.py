"""An agent that crashes mid-run (its worker process SIGKILLed; the farm host lives) is restarted by
Ray and given the remaining samples: the phone resumes from the rows it finished, the run exits 0
with every sample exactly once, and the device's outcome says the agent was restarted.

The restarted session replays the rows the phone had finished before it runs the rest: the
controller keeps each sample's first row, so its stream file never holds a sample twice; an agent
that dies again (its restart used) loses the phone, and the rows that came back are its results,
each once and scored, as a lost phone's are on one controller; `--resume` then finishes every
sample once (docs/cluster.md)."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from pathlib import Path

import pytest

from android_runner.contract import read_results
from orchestrator.farm.rundir import device_folder

pytestmark = pytest.mark.cluster
WAIT_S = 240.0
LIMIT = 12
TWICE = 20


def _ids(path: Path) -> list[str]:
    return [r.id for r in read_results(path)]


def test_a_crashed_agent_is_restarted_and_runs_the_remaining_samples(cluster_lab, tmp_path):
    lab = cluster_lab
    device = lab.phones_by_host()["h2"][0]
    out = tmp_path / "runs"
    proc = lab.running_run([device], LIMIT, out)
    try:
        (agent,) = lab.agents("h2")
        os.kill(agent, signal.SIGKILL)
        proc.wait(timeout=WAIT_S * 2)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, (tmp_path / "stderr.txt").read_text()[-4000:]
    run = next(out.iterdir())
    ids = _ids(device_folder(run, device) / "results.jsonl")
    assert len(ids) == LIMIT and len(set(ids)) == LIMIT, ids
    outcome = json.loads((device_folder(run, device) / "outcome.json").read_text())
    assert any("was restarted" in n for n in outcome["notes"]), outcome["notes"]
    assert outcome["sessions"] == 2  # the one the crash ended, and the one that finished
    report = json.loads((device_folder(run, device) / "report.json").read_text())
    assert report["summary"]["total_scored"] == LIMIT
    done = [
        int(n)
        for n in re.findall(rf"{re.escape(device)}\s+(\d+)/{LIMIT} ", (tmp_path / "stderr.txt").read_text())
    ]
    assert max(done) == LIMIT, done  # the progress counted each sample once, the replayed ones too


def test_an_agent_that_dies_twice_loses_the_phone_and_keeps_each_finished_sample_once(cluster_lab, tmp_path):
    lab = cluster_lab
    device = lab.phones_by_host()["h2"][0]
    out = tmp_path / "runs"
    proc = lab.running_run([device], TWICE, out)  # the run outlasts two restarts
    try:
        run = next(out.iterdir())
        stream = device_folder(run, device) / "results.stream.jsonl"
        (first,) = lab.agents("h2")
        before = _ids(stream)
        os.kill(first, signal.SIGKILL)
        deadline = time.monotonic() + WAIT_S
        while len(_ids(stream)) <= len(before) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)  # the restarted session replays the phone's rows, then a new one arrives
        seen = _ids(stream)
        assert len(seen) > len(before), "no new row came from the restarted agent"
        assert len(seen) == len(set(seen)) and set(before) <= set(seen), (
            seen
        )  # replayed rows not written again
        (second,) = [p for p in lab.agents("h2") if p != first]
        os.kill(second, signal.SIGKILL)
        proc.wait(timeout=WAIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, (tmp_path / "stderr.txt").read_text()[-4000:]
    dev = device_folder(run, device)
    outcome = json.loads((dev / "outcome.json").read_text())
    assert "farm host h2" in outcome["error"] and "--resume" in outcome["error"]
    kept = _ids(dev / "results.jsonl")
    assert len(kept) == len(set(kept)) and set(seen) <= set(kept) and len(kept) < TWICE, kept
    assert not (dev / "results.stream.jsonl").exists()
    assert json.loads((dev / "report.json").read_text())["summary"]["total_scored"] == len(kept)

    p = lab.edgefarm("run", "--resume", str(run))  # the phone finishes from its own rows: each sample once
    assert p.returncode == 0, p.stderr[-4000:]
    ids = _ids(dev / "results.jsonl")
    assert len(ids) == TWICE and len(set(ids)) == TWICE and set(kept) <= set(ids)
