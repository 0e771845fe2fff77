"""The controller is SIGKILLed mid-run: no agent is left running on any farm host (Ray ends the
actors of a dead driver), and `edgefarm run --resume RUN` finishes with every sample exactly once,
with 0 bytes sent again to hosts whose caches hold the model (docs/cluster.md): the lab's proof that a
rerun moves nothing (each host answers "held")."""

from __future__ import annotations

import json
import signal
import time

import pytest

from android_runner.contract import read_results
from orchestrator.farm.rundir import device_folder

pytestmark = pytest.mark.cluster
WAIT_S = 240.0
LIMIT = 12


def test_a_killed_controller_leaves_no_agent_and_resume_runs_every_sample_once(cluster_lab, tmp_path):
    lab = cluster_lab
    on = lab.phones_by_host()
    devices = [on["h1"][0], on["h2"][0]]
    out = tmp_path / "runs"
    proc = lab.running_run(devices, LIMIT, out)
    try:
        assert lab.agents(), "no agent was running"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
    deadline = time.monotonic() + WAIT_S
    while lab.agents() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert lab.agents() == []

    run = next(out.iterdir())
    p = lab.edgefarm("run", "--resume", str(run))
    assert p.returncode == 0, p.stderr[-4000:]
    for name in devices:
        ids = [r.id for r in read_results(device_folder(run, name) / "results.jsonl")]
        assert len(ids) == LIMIT and len(set(ids)) == LIMIT, (name, ids)
    hosts = json.loads((run / "run.json").read_text())["cluster"]["hosts"]
    assert {h: (v["bytes_received"], v["files_sent"], v["files_held"]) for h, v in hosts.items()} == {
        "h1": (0, 0, 1),  # text rows: the model only, held by the host's cache
        "h2": (0, 0, 1),
    }
