"""An agent that crashes mid-run (its worker process SIGKILLed; the farm host lives) is restarted by
Ray and given the remaining samples: the phone resumes from the rows it finished, the run exits 0
with every sample exactly once, and the device's outcome says the agent was restarted."""

from __future__ import annotations

import json
import os
import signal

import pytest

from android_runner.contract import read_results
from orchestrator.rundir import device_folder

pytestmark = pytest.mark.cluster
WAIT_S = 240.0
LIMIT = 12


def test_a_crashed_agent_is_restarted_and_runs_the_remaining_samples(cluster_lab, tmp_path):
    lab = cluster_lab
    device = lab.phones_by_host()["h2"][0]
    out = tmp_path / "runs"
    proc = lab.running_run([device], LIMIT, out)
    try:
        (agent,) = lab.agents()
        os.kill(agent, signal.SIGKILL)
        proc.wait(timeout=WAIT_S * 2)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, (tmp_path / "stderr.txt").read_text()[-4000:]
    run = next(out.iterdir())
    ids = [r.id for r in read_results(device_folder(run, device) / "results.jsonl")]
    assert len(ids) == LIMIT and len(set(ids)) == LIMIT, ids
    outcome = json.loads((device_folder(run, device) / "outcome.json").read_text())
    assert any("was restarted" in n for n in outcome["notes"]), outcome["notes"]
