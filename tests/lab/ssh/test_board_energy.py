"""Energy on the loopback board (real sshd, the Python runner): its hwmon power sensors have a known
constant profile, so energy per token must match it within 5%. The board's `python` is a wrapper
that points the runner at the profile's hwmon folder (a Pi's /sys/class/hwmon is not ours to fake)."""

from __future__ import annotations

import sys

from ..local.conftest import edgefarm, only_run_dir, results
from .conftest import write_inventory

PROFILE_W = 4.2  # one INA-style sensor: 4,200,000 uW


def test_board_energy_per_token_matches_its_power_profile(board, tmp_path):
    hwmon = tmp_path / "hwmon"
    (hwmon / "hwmon2").mkdir(parents=True)
    (hwmon / "hwmon2" / "power1_input").write_text("4200000\n")
    python = tmp_path / "board-python"
    python.write_text(f'#!/bin/sh\nEDGEFARM_HWMON_ROOT="{hwmon}" exec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    inv = write_inventory(
        tmp_path / "devices.yaml", board.entry("pi-lab", tmp_path / "work", python=str(python))
    )
    out = tmp_path / "runs"
    p = edgefarm("run", "--devices", "pi-lab", "--inventory", str(inv), "--out", str(out), "--modality", "text",
                 "--limit", "3")  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    ok = [r for r in results(only_run_dir(out), "pi-lab") if r["status"] == "ok"]
    assert len(ok) == 3
    for r in ok:
        assert r["power_source"] == "hwmon" and r["energy_unreliable"] == ""
        watts = r["energy_j"] / r["power"]["dt_s"]
        assert abs(watts - PROFILE_W) <= 0.05 * PROFILE_W, r
        per_token = r["energy_j"] * 1000 / r["decode_tokens"]
        assert abs(r["energy_mj_per_token"] - per_token) <= 1e-3 * per_token
