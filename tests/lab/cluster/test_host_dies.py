"""A farm host dies mid-run (its Ray node SIGKILLed: raylet, agent and all): its phone's outcome is
a lost device naming the host, the rows that streamed back before are kept in the controller's run
folder (its results.jsonl, scored), the other host's phone finishes, and the run exits 3 (docs/cluster.md)."""

from __future__ import annotations

import json

import pytest

from android_runner.contract import read_results
from orchestrator.farm.rundir import device_folder

pytestmark = pytest.mark.cluster
STREAM_WAIT_S = 240.0


def test_a_farm_host_that_dies_mid_run_loses_its_phone_with_the_reason_and_keeps_its_rows(
    cluster_lab, tmp_path
):
    lab = cluster_lab
    on = lab.phones_by_host()
    doomed, survivor = on["h2"][0], on["h1"][0]
    out = tmp_path / "runs"
    proc = lab.running_run([doomed, survivor], 20, out, first_row_of=doomed)
    try:
        lab.kill_host("h2")
        proc.wait(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
        lab.start_host("h2")  # the session's other stories get their host back
    stderr = (tmp_path / "stderr.txt").read_text()
    assert proc.returncode == 3, stderr[-4000:]
    run = next(out.iterdir())
    lost = json.loads((device_folder(run, doomed) / "outcome.json").read_text())
    assert "farm host h2" in lost["error"] and f"edgefarm run --resume {run}" in lost["error"], lost["error"]
    assert "Rpc" not in lost["error"] and "grpc" not in lost["error"].lower()  # the project's words, not Ray's
    kept = [
        r.id for r in read_results(device_folder(run, doomed) / "results.jsonl")
    ]  # scored, as one controller
    assert 1 <= len(kept) < 20 and len(set(kept)) == len(kept)
    assert json.loads((device_folder(run, doomed) / "report.json").read_text())["summary"][
        "total_scored"
    ] == len(kept)
    assert len(list(read_results(device_folder(run, survivor) / "results.jsonl"))) == 20
    assert doomed in stderr and "h2" in stderr
