"""The agent's lease (orchestrator/cluster/agent.py): an agent process whose controller stops renewing
ends by itself, and one told to leave ends at once; a renewed one lives on. Real processes (the agent
class as Ray runs it, with its own `os._exit`), without Ray: the head being gone is exactly the case
where Ray cannot end them."""

from __future__ import annotations

import subprocess
import sys
import time

LEASE = 1.0
BOUND_S = 10.0  # LEASE + the poll, a process start and a loaded 2-core machine


def _agent(tmp_path, then: str) -> subprocess.Popen:
    code = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from orchestrator.cluster.agent import FarmHostAgent\n"
        f"agent = FarmHostAgent('h1', cache_root=Path({str(tmp_path)!r}), lease_s={LEASE})\n"
        "print('up', flush=True)\n"
        f"{then}\n"
        "time.sleep(60)\n"
        "sys.exit(7)  # never reached when the lease ends the process\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "up\n"
    return proc


def _ends_within(proc: subprocess.Popen, seconds: float) -> float:
    t0 = time.monotonic()
    try:
        code = proc.wait(timeout=seconds)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 0
    return time.monotonic() - t0


def test_an_agent_whose_controller_stops_renewing_ends_and_a_renewed_one_lives(tmp_path):
    gone = tmp_path / "controller-gone"
    renewed = _agent(tmp_path, f"while not Path({str(gone)!r}).exists():\n    agent.renew(); time.sleep(0.1)")
    forgotten = _agent(tmp_path, "")
    t0 = time.monotonic()
    _ends_within(forgotten, BOUND_S)
    time.sleep(max(0.0, 3 * LEASE - (time.monotonic() - t0)))
    assert renewed.poll() is None  # 3 leases long at least, still there: it was renewed
    gone.touch()  # its controller stops renewing
    _ends_within(renewed, BOUND_S)


def test_an_agent_told_to_leave_ends_at_once(tmp_path):
    proc = _agent(tmp_path, "agent.renew(); agent.leave()")
    assert _ends_within(proc, BOUND_S) < LEASE + 5.0  # the poll, not the lease
