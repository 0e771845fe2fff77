"""One run per phone across a cluster (issue 24's lock, taken by the farm host's agent around each
session): a plain `edgefarm run` holding a phone makes a `--cluster` run refuse that phone at once,
with the single controller's words (the holder's run id, pid and host, and the fix), and the other
way round the plain run is refused naming the cluster run and its agent's pid. The holder runs on
untouched both times. Two cluster runs share a farm host (each its own agent) and are kept apart
on a phone by the same lock (docs/cluster.md)."""

from __future__ import annotations

import json
import re
import signal
from concurrent.futures import ThreadPoolExecutor

import pytest

from orchestrator.farm.rundir import device_folder
from orchestrator.interrupt import INTERRUPTED_EXIT

pytestmark = pytest.mark.cluster
LIMIT = 41  # every text sample of the bundled set, 40 times (~20 samples/s in the lab; stopped by Ctrl-C
# once asked): still running when the other runs ask
HOLD = ("--repeat", "40")
WAIT_S = 240.0
HOLDER = re.compile(r"(\S+) is in use by run (\S+) \(pid (\d+) on (\S+)\)")


def _refused(p, device: str, stops: int = 0) -> tuple[str, int]:
    """The holder's run id and pid from a run refused for a busy device (exit 3, no traceback). The
    fix's `kill -INT` names the process that stops the holding run: `stops` (a cluster run's controller,
    issue 34: the agent's pid, named before, did not stop that run), else the holder itself."""
    assert p.returncode == 3, p.stderr[-3000:]
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr
    said = " ".join(p.stderr.split())
    m = HOLDER.search(said)
    assert m and m.group(1) == device, said[-3000:]
    assert f"kill -INT {stops or m.group(3)}`" in said and "two runs on one device would skew" in said, said
    if stops:
        assert f"stop run {m.group(2)} on its controller" in said and f"agent pid {m.group(3)}" in said, said
    return m.group(2), int(m.group(3))


def _stop(proc) -> int:
    proc.send_signal(signal.SIGINT)
    return proc.wait(timeout=WAIT_S)


def test_a_plain_run_and_a_cluster_run_never_share_a_phone(cluster_lab, tmp_path):
    lab = cluster_lab
    device = lab.phones_by_host()["h2"][0]
    common = ["--limit", "2", "--modality", "text", "--max-output-tokens", "8"]

    # a plain run from a controller whose adb server is h2's holds the phone: the cluster run is refused
    (tmp_path / "a").mkdir()
    plain = lab.running_run([device], LIMIT, tmp_path / "a" / "runs", extra=HOLD, plain_on="h2")
    try:
        p = lab.edgefarm(
            "run", "--cluster", lab.address, "--devices", device, "--out", str(tmp_path / "c"), *common
        )
        assert plain.poll() is None, (
            "the plain run ended before the cluster run asked: the test proves nothing"
        )
    finally:
        code = _stop(plain)
    assert code == INTERRUPTED_EXIT, (tmp_path / "a" / "stderr.txt").read_text()[-3000:]
    run_a = next((tmp_path / "a" / "runs").iterdir())
    assert _refused(p, device) == (run_a.name, plain.pid)
    cluster_run = next((tmp_path / "c").iterdir())
    outcome = json.loads((device_folder(cluster_run, device) / "outcome.json").read_text())
    assert f"{device} is in use by run {run_a.name}" in outcome["error"] and outcome["error_code"] == 3
    assert not (device_folder(cluster_run, device) / "results.jsonl").exists()  # nothing ran there

    # the cluster run's agent holds it: the plain run is refused, naming that run and the agent's pid
    (tmp_path / "b").mkdir()
    held = lab.running_run([device], LIMIT, tmp_path / "b" / "runs", extra=HOLD)
    try:
        # the plain run and a second cluster run ask side by side (each is refused on its own: the
        # holder's lock is the phone's): a second cluster run gets its own agent on the same host (runs
        # share a farm host) and is refused that phone by the phone's lock, naming the first cluster run
        with ThreadPoolExecutor(2) as asking:
            plain_asks = asking.submit(lab.edgefarm, "run", "--devices", device, "--out", str(tmp_path / "d"),
                                       *common, ANDROID_ADB_SERVER_PORT=str(lab.hosts["h2"].adb.port))  # fmt: skip
            cluster_asks = asking.submit(lab.edgefarm, "run", "--cluster", lab.address, "--devices", device,
                                         "--out", str(tmp_path / "e"), *common)  # fmt: skip
            q, r = plain_asks.result(), cluster_asks.result()
        assert held.poll() is None, (
            "the cluster run ended before the other runs asked: the test proves nothing"
        )
        agents = lab.agents("h2")
    finally:
        code = _stop(held)
    assert code == INTERRUPTED_EXIT, (tmp_path / "b" / "stderr.txt").read_text()[-3000:]
    run_b = next((tmp_path / "b" / "runs").iterdir())
    holder_run, holder_pid = _refused(q, device, stops=held.pid)
    assert holder_run == run_b.name and holder_pid in agents  # the farm host's agent holds it
    assert _refused(r, device, stops=held.pid) == (run_b.name, holder_pid)
