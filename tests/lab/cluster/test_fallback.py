"""Stand-in boards across farm hosts: a phone on h2 is unplugged mid-run; after `--fallback-wait-s`
its remaining samples run on the board that farm host h3's own devices.yaml declares with
`fallback_for: [the phone]` (a real sshd inside the lab's namespace), in that board's session on
h3's agent (`--fallback BOARD` naming a host's board takes the same path: fallback.stand_in_boards,
tests/unit/cluster/test_stand_in_listing.py). As on one controller
(docs/boards.md): the phone keeps the rows it finished, the board's rows fill its column marked
`stood_in_for`, nothing runs twice, and a failure the stand-in covered does not fail the run."""

from __future__ import annotations

import json

import pytest

from android_runner.contract import read_results
from orchestrator.farm.rundir import device_folder

from ..ssh.conftest import sshd

pytestmark = pytest.mark.cluster
LIMIT = 8
WAIT_S = 300.0


def test_a_phone_lost_on_one_host_has_its_remaining_samples_run_by_a_board_on_another(cluster_lab, tmp_path):
    lab = cluster_lab
    phone = lab.phones_by_host()["h2"][0]
    board_cm = sshd(tmp_path / "sshd")
    board = lab.ns.call(board_cm.__enter__)  # its sshd listens inside the namespace, where h3 reaches it
    out = tmp_path / "runs"
    try:
        entry = board.entry("pi-lab", tmp_path / "pi-lab", fallback_for=[phone])  # h3's own devices.yaml
        lab.hosts["h3"].inventory.write_text(json.dumps({"devices": [entry]}))
        proc = lab.running_run([phone], LIMIT, out, extra=("--fallback-wait-s", "1"))
        try:
            lab.phones.phones["redmi"].vanish()  # unplugged mid-run
            proc.wait(timeout=WAIT_S)
        finally:
            if proc.poll() is None:
                proc.kill()
    finally:
        lab.hosts["h3"].inventory.write_text("devices: []\n")
        lab.ns.call(lab.phones.come_back, "redmi")
        board_cm.__exit__(None, None, None)
    stderr = (tmp_path / "stderr.txt").read_text()
    assert proc.returncode == 0, stderr[-4000:]
    run = next(out.iterdir())
    record = json.loads((run / "run.json").read_text())
    (stand,) = record["stand_ins"]
    assert (stand["phone"], stand["board"], stand["completed"]) == (phone, "pi-lab", True)
    assert stand["reason"].startswith("lost mid-run"), stand
    missing = stand["sample_ids"]
    column = list(read_results(device_folder(run, phone) / "results.jsonl"))
    ids = [r.id for r in column]
    assert len(ids) == LIMIT and len(set(ids)) == LIMIT, ids  # every sample once in the phone's column
    own = [r.id for r in column if not r.stood_in_for]
    assert own and sorted(own + missing) == sorted(ids)  # the phone kept what it finished
    assert {r.id for r in column if r.stood_in_for == phone} == set(missing)
    boards = [r.id for r in read_results(device_folder(run, f"pi-lab-for-{phone}") / "results.jsonl")]
    assert sorted(boards) == sorted(missing)
    assert "h3" in record["cluster"]["hosts"]  # the board's session ran on h3, which took the model
    assert "stands in" in stderr
