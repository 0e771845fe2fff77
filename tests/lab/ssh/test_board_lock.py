"""Issue 24, one run per device, on a board (a real sshd on loopback), through the real CLI: a lock held
by a run on ANOTHER host is judged by its heartbeat as the board's own clock sees it: fresh, the run is
refused with the holder's run id, pid and host; older than STALE_S, it is taken over with a warning."""

from __future__ import annotations

import os
import time

from orchestrator.devices.lock import STALE_S

from ..local.conftest import edgefarm
from .conftest import write_inventory

OTHER = "run=20260101-000000-abcd pid=4242 host=farm-host-2 boot=0c1d start=99"


def test_a_board_held_from_another_host_is_refused_until_its_heartbeat_is_stale(board, tmp_path):
    work = tmp_path / "work"
    holder = work / "run.lock" / "holder"
    holder.parent.mkdir(parents=True)
    holder.write_text(OTHER + "\n")  # another host's live run
    inv = write_inventory(tmp_path / "devices.yaml", board.entry("pi-lab", work))
    flags = ("--devices", "pi-lab", "--inventory", str(inv), "--modality", "text", "--limit", "1",
             "--max-output-tokens", "4")  # fmt: skip

    p = edgefarm("run", *flags, "--out", str(tmp_path / "a"))
    assert p.returncode == 3, p.stderr[-3000:]
    said = " ".join(p.stderr.split())
    assert "pi-lab is in use by run 20260101-000000-abcd (pid 4242 on farm-host-2)" in said, said
    assert holder.read_text().strip() == OTHER  # left alone

    old = time.time() - STALE_S - 60  # that host stopped refreshing it: its run is gone
    os.utime(holder, (old, old))
    p = edgefarm("run", *flags, "--out", str(tmp_path / "b"))
    assert p.returncode == 0, p.stderr[-3000:]
    said = " ".join(p.stderr.split())
    assert "took over pi-lab's lock from run 20260101-000000-abcd (pid 4242 on farm-host-2)" in said, said
    assert not holder.exists()  # the new run released its own lock at its end
