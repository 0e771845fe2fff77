"""Ctrl-C on the controller of a cluster run: every farm host's session stops its runner and keeps
what finished, the controller writes the reports and exits 130, no agent is left, and `--resume`
finishes every sample exactly once (docs/cluster.md)."""

from __future__ import annotations

import json
import signal
import time

import pytest

from android_runner.contract import read_results
from orchestrator.farm.rundir import device_folder
from orchestrator.interrupt import INTERRUPTED_EXIT

pytestmark = pytest.mark.cluster
WAIT_S = 240.0
LIMIT = 12


def test_ctrl_c_stops_every_hosts_session_keeps_the_rows_and_resume_finishes(cluster_lab, tmp_path):
    lab = cluster_lab
    on = lab.phones_by_host()
    devices = [on["h1"][0], on["h2"][0]]
    out = tmp_path / "runs"
    proc = lab.running_run(devices, LIMIT, out)
    try:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=WAIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == INTERRUPTED_EXIT, (tmp_path / "stderr.txt").read_text()[-4000:]
    run = next(out.iterdir())
    assert (run / "report.json").is_file()
    outcomes = [json.loads((device_folder(run, n) / "outcome.json").read_text()) for n in devices]
    assert [o["error"] for o in outcomes] == ["", ""]  # stopped, not failed
    assert any(o["interrupted"] for o in outcomes)
    deadline = time.monotonic() + WAIT_S
    while lab.agents() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert lab.agents() == []

    p = lab.edgefarm("run", "--resume", str(run))
    assert p.returncode == 0, p.stderr[-4000:]
    for name in devices:
        ids = [r.id for r in read_results(device_folder(run, name) / "results.jsonl")]
        assert len(ids) == LIMIT and len(set(ids)) == LIMIT, (name, ids)
