"""Energy on a board/host through the Python runner: hwmon power sensors with a known profile, and
a host without any sensor, whose rows say "not measured" (None), never 0."""

from __future__ import annotations

from pathlib import Path

from .conftest import results

PROFILE_UW = {"hwmon0/power1_input": 5_200_000, "hwmon3/power1_input": 800_000}  # two rails: 6.0 W


def _hwmon(root: Path, files: dict[str, int]) -> Path:
    for rel, uw in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"{uw}\n")
    (root / "hwmon1").mkdir(exist_ok=True)  # a temperature-only chip: no power input
    (root / "hwmon1" / "temp1_input").write_text("48000\n")
    return root


def test_hwmon_power_integrates_to_the_known_profile(run_here, tmp_path):
    hwmon = _hwmon(tmp_path / "hwmon", PROFILE_UW)
    ran = run_here("--modality", "text", "--limit", "4", env={"EDGEFARM_HWMON_ROOT": str(hwmon)})
    assert ran.proc.returncode == 0, ran.proc.stderr[-3000:]
    ok = [r for r in results(ran.run_dir) if r["status"] == "ok"]
    assert len(ok) == 4
    for r in ok:
        assert r["power_source"] == "hwmon" and r["energy_unreliable"] == ""
        watts = r["energy_j"] / r["power"]["dt_s"]
        assert abs(watts - 6.0) <= 0.05 * 6.0, r
        assert r["power"]["dt_s"] <= r["wall_ms"] / 1000 + 0.02  # closed right after the sample
        assert (
            abs(r["energy_mj_per_token"] - r["energy_j"] * 1000 / r["decode_tokens"])
            < 1e-3 * r["energy_mj_per_token"]
        )


def test_no_power_sensor_means_not_measured(run_here, tmp_path):
    empty = tmp_path / "no-hwmon"
    empty.mkdir()
    ran = run_here("--modality", "text", "--limit", "2", env={"EDGEFARM_HWMON_ROOT": str(empty)})
    assert ran.proc.returncode == 0, ran.proc.stderr[-3000:]
    for r in results(ran.run_dir):
        assert r["energy_j"] is None and r["energy_mj_per_token"] is None and r["power"] is None
