"""An agent that crashes mid-run (its worker process SIGKILLed; the farm host lives) is restarted by
Ray and given the remaining samples: the phone resumes from the rows it finished, the run exits 0
with every sample exactly once, and the device's outcome says the agent was restarted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest

from android_runner.contract import read_results
from orchestrator.rundir import device_folder

from .conftest import BIN
from .test_controller_killed import _agents

pytestmark = pytest.mark.cluster
WAIT_S = 240.0
LIMIT = 12


def test_a_crashed_agent_is_restarted_and_runs_the_remaining_samples(cluster_lab, tmp_path):
    lab = cluster_lab
    listing = json.loads(lab.edgefarm("devices", "--cluster", lab.address, "--json").stdout)
    device = next(h["infos"][0]["name"] for h in listing["hosts"] if h["host"] == "h2")
    out = tmp_path / "runs"
    argv = [str(BIN / "edgefarm"), "run", "--cluster", lab.address, "--devices", device,
            "--limit", str(LIMIT), "--modality", "text", "--max-output-tokens", "8", "--out", str(out)]  # fmt: skip
    log = tmp_path / "stderr.txt"
    with open(log, "w") as err:
        proc = lab.ns.popen(argv, env=lab.controller_env(), stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline and proc.poll() is None:
            if any(p.read_text().count("\n") >= 1 for p in out.glob("*/devices/*/results.stream.jsonl")):
                break
            time.sleep(0.2)
        assert proc.poll() is None, "the run ended before the agent could crash"
        (agent,) = _agents(lab)
        os.kill(agent, signal.SIGKILL)
        proc.wait(timeout=WAIT_S * 2)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, log.read_text()[-4000:]
    run = next(out.iterdir())
    ids = [r.id for r in read_results(device_folder(run, device) / "results.jsonl")]
    assert len(ids) == LIMIT and len(set(ids)) == LIMIT, ids
    outcome = json.loads((device_folder(run, device) / "outcome.json").read_text())
    assert any("was restarted" in n for n in outcome["notes"]), outcome["notes"]
