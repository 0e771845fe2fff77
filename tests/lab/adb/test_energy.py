"""Energy per sample and per token on lab phones whose battery folder has a known, constant profile.

Pixel 8: uA/uV, discharge negative; Galaxy S24: mA/mV, discharge positive; Redmi: only current_avg,
on the charger. With constant current and voltage the energy is exactly P * t, so each row's joules
over its measured window must give the profile's power (within 5%), per token = J / decode tokens.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .sandbox import GALAXY_S24, PIXEL_8, REDMI_NOTE_13, PhoneSpec

REPO = Path(__file__).resolve().parents[3]
PROFILES = {"pixel-8": PIXEL_8, "sm-s921b": GALAXY_S24, "23021raaeg": REDMI_NOTE_13}


def edgefarm(lab, *args: str, **env_extra: str) -> subprocess.CompletedProcess:
    env = lab.env(COLUMNS="200", **env_extra)
    env.pop("EDGEFARM_INVENTORY", None)
    return subprocess.run([sys.executable, "-m", "orchestrator", *args], check=False, capture_output=True,
                          text=True, timeout=300, env=env, cwd=REPO)  # fmt: skip


def _rows(run_dir: Path, name: str) -> list[dict]:
    text = (run_dir / "devices" / name / "results.jsonl").read_text()
    return [json.loads(x) for x in text.splitlines() if x.strip()]


def _run(lab, tmp_path: Path, *extra: str, **env: str) -> Path:
    inv = tmp_path / "devices.yaml"
    inv.write_text(f"adb_servers: [127.0.0.1:{lab.servers[1].port}]\n")
    out = tmp_path / "runs"
    p = edgefarm(lab, "run", "--devices", ",".join(PROFILES), "--inventory", str(inv), "--modality", "text",
                 "--limit", "4", "--sample-timeout", "60", "--out", str(out), *extra, **env)  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    (run_dir,) = [d for d in out.iterdir() if d.is_dir()]
    return run_dir


def _check_profile(rows: list[dict], spec, name: str) -> None:
    ok = [r for r in rows if r["status"] == "ok"]
    assert ok, rows
    for r in ok:
        assert r["energy_j"] is not None and r["energy_j"] > 0, (name, r)
        window_s = r["power"]["dt_s"]
        assert window_s > 0 and r["power"]["n"] >= 2
        watts = r["energy_j"] / window_s
        assert abs(watts - spec.power_w) <= 0.05 * spec.power_w, (name, watts, spec.power_w)
        per_token = r["energy_j"] * 1000 / r["decode_tokens"]
        assert abs(r["energy_mj_per_token"] - per_token) <= 1e-3 * per_token, (name, r)
        assert window_s <= r["wall_ms"] / 1000 + 0.2  # the window lies inside the sample (upstream: +1 poll)
    watts = [r["energy_j"] / r["power"]["dt_s"] for r in ok]
    print(f"{name}: profile {spec.power_w:.4f} W, measured {min(watts):.4f}..{max(watts):.4f} W, "
          f"{ok[0]['energy_mj_per_token']} mJ/token on {ok[0]['decode_tokens']} tokens")  # fmt: skip


def test_native_runner_energy_matches_each_phones_power_profile(adb_lab, tmp_path):
    run_dir = _run(adb_lab, tmp_path)
    for name, spec in PROFILES.items():
        rows = _rows(run_dir, name)
        _check_profile(rows, spec, name)
        ok = [r for r in rows if r["status"] == "ok"]
        if name == "23021raaeg":
            assert all(r["power_source"] == "sysfs:current_avg" for r in ok)
            assert all("charging" in r["energy_unreliable"] for r in ok)
        else:
            assert all(r["power_source"] == "sysfs:current_now" and r["energy_unreliable"] == "" for r in ok)
    pixel = _rows(run_dir, "pixel-8")[0]["power"]
    assert pixel["neg"] >= 2 and pixel["pos"] == 0  # raw sign kept on the phone, handled on the host


def test_upstream_binary_energy_from_the_drivers_polling_matches_the_profile(adb_lab, tmp_path):
    run_dir = _run(adb_lab, tmp_path, EDGEFARM_PHONE_RUNNER="upstream")
    for name, spec in PROFILES.items():
        rows = _rows(run_dir, name)
        # the driver polls each 0.1 s, from before the start to after the exit
        _check_profile(rows, spec, name)
        ok = [r for r in rows if r["status"] == "ok"]
        assert all(bool(r["energy_unreliable"]) == (name == "23021raaeg") for r in ok)


def test_sysfs_closed_falls_back_to_dumpsys_battery_current(adb_lab, tmp_path):
    """A Samsung whose power-supply folder is closed: its `dumpsys battery` prints `current now: -412`
    (mA) and `voltage: 3912` (mV) before and after each sample: 1.6117 W over the sample's wall time."""
    props = dict(GALAXY_S24.props, **{"ro.product.model": "SM-S921X", "ro.product.name": "closed"})
    spec = PhoneSpec(name="closed", props=props, battery=GALAXY_S24.battery, thermal=GALAXY_S24.thermal)
    adb_lab.add_phone("closed", spec)
    try:
        out = tmp_path / "runs"
        p = edgefarm(
            adb_lab, "run", "--devices", "sm-s921x", "--modality", "text", "--limit", "3", "--out", str(out)
        )
        assert p.returncode == 0, p.stderr[-3000:]
        (run_dir,) = [d for d in out.iterdir() if d.is_dir()]
        ok = [r for r in _rows(run_dir, "sm-s921x") if r["status"] == "ok"]
        assert ok
        for r in ok:
            assert r["power_source"] == "dumpsys:current now" and r["energy_unreliable"] == ""
            watts = r["energy_j"] / (r["wall_ms"] / 1000)
            assert abs(watts - 0.412 * 3.912) <= 0.05 * 0.412 * 3.912, r
    finally:
        adb_lab.remove_phone("closed")
