"""`edgefarm run --fidelity` for real on this host: two devices on the same runtime agree to exactly 0;
a runtime whose arithmetic drifts (faulty_runner.py NOISE) is flagged at the size injected, and a drift
far below the noise threshold is not."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from .conftest import FAULTY_RUNNER, edgefarm, only_run_dir, results, run_json

SAMPLES = 12


def _inventory(tmp_path: Path, noise: dict[str, float]) -> Path:
    devices = []
    for name, sd in noise.items():
        entry = {"name": name, "kind": "local", "workdir": str(tmp_path / name)}
        if sd:  # this device's python runs the real runner on a drifting runtime
            wrapper = tmp_path / f"python-{name}"
            wrapper.write_text(
                f'#!/bin/sh\nEDGEFARM_TEST_FAULTS="NOISE={sd}" exec "{sys.executable}" "{FAULTY_RUNNER}" "$@"\n'
            )
            wrapper.chmod(0o755)
            entry["python"] = str(wrapper)
        devices.append(entry)
    inv = tmp_path / "devices.yaml"
    inv.write_text(json.dumps({"devices": devices}))
    return inv


@pytest.fixture()
def fidelity_run(tmp_path: Path):
    def run(noise: dict[str, float], *flags: str):
        out = tmp_path / "runs"
        p = edgefarm("run", "--devices", ",".join(noise), "--inventory", str(_inventory(tmp_path, noise)),
                     "--out", str(out), "--fidelity", "--modality", "text", "--limit", str(SAMPLES), *flags)  # fmt: skip
        assert p.returncode == 0, p.stderr[-3000:]
        run_dir = only_run_dir(out)
        return run_dir, {d["device"]: d for d in run_json(run_dir)["fidelity"]["devices"]}

    return run


def test_two_devices_on_the_same_runtime_agree_exactly_and_a_drifting_one_is_flagged(fidelity_run):
    run_dir, by = fidelity_run({"host-a": 0.0, "host-b": 0.0, "drifting": 0.5})
    rows = results(run_dir, "host-a")
    assert len(rows) == SAMPLES and all(r["fidelity"]["logp"] and r["fidelity"]["answer_ids"] for r in rows)
    assert all(len(r["fidelity"]["logp"]) == r["fidelity"]["target_tokens"] for r in rows)
    b, drift = by["host-b"], by["drifting"]
    assert by["host-a"]["reason"] == "reference" and b["scored"] == SAMPLES
    assert b["mean_abs_dlogp"] == 0.0 and b["max_abs_dlogp"] == 0.0
    assert b["verdict"] == "same model within float noise" and b["answers_identical"] == SAMPLES
    lo, hi = drift["intervals"]["mean_abs_dlogp"]
    assert drift["verdict"] == "computes differently" and lo <= 0.5 * 0.7979 <= hi  # E|N(0, sd)| = 0.80 sd
    assert drift["answers_identical"] < SAMPLES and drift["first_diff_median"] >= 1
    md = (run_dir / "report.md").read_text()
    assert "## Fidelity against host-a" in md and "## Largest departures, side by side" in md
    assert drift["worst"][0] in md.split("## Largest departures")[1]


def test_a_drift_far_below_the_threshold_is_not_flagged(fidelity_run):
    _, by = fidelity_run({"host-a": 0.0, "quiet": 0.002})
    q = by["quiet"]
    assert 0.0 < q["mean_abs_dlogp"] < 0.01 and q["verdict"] == "same model within float noise"
    assert q["answers_identical"] == SAMPLES
