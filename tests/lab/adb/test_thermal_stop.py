"""A lab phone the OS stops for heat mid-run (tests/lab/adb/gauge.py ThermalSpec.stop_above): its CPU
temperature follows its load (0.3 s of CPU work per sample, 4 °C per CPU-second), past 36 °C the thermal
service says SEVERE (3) and the clock is capped; past 37 °C the phone's OS SIGKILLs the runner once. The
killed sample is a row with status `thermal_stop` and the thermal status in its error, not a missing row
or a plain `killed`; the samples before it are ok, the rest run after it (the phone still hot)."""

from __future__ import annotations

import json

from .gauge import ThermalSpec
from .test_sustain import heated_run

HOT = ThermalSpec(ambient_c=34.0, heat_c_per_cpu_s=4.0, tau_s=300.0, steps=((35.0, 2_000_000, 1), (36.0, 1_200_000, 3)),
                  stop_above=37.0)  # fmt: skip
LIMIT = 8


def test_a_runner_the_os_stops_for_heat_reads_thermal_stop(adb_lab, tmp_path):
    out = tmp_path / "runs"
    p, gauge = heated_run(adb_lab, out, HOT, LIMIT)
    kills = gauge.heat_kills
    assert p.returncode == 0, p.stderr[-3000:]
    assert kills, "the lab phone never got hot enough to stop its runner"
    (run_dir,) = [d for d in out.iterdir() if d.is_dir()]
    rows = [json.loads(x) for x in (run_dir / "devices" / "google-pixel-8" / "results.jsonl").read_text().splitlines()]
    print([(r["status"], (r.get("thermal_after") or {}).get("thermal_status")) for r in rows])
    assert len(rows) == LIMIT  # the stopped sample is a row, not a gap
    stopped = [r for r in rows if r["status"] == "thermal_stop"]
    assert len(stopped) == 1, [r["status"] for r in rows]
    assert "stopped by the OS for heat: the OS's thermal status was 3 (severe) at the kill" in stopped[0]["error"]
    assert stopped[0]["signal"] == 9
    first = rows.index(stopped[0])
    assert first > 0 and all(r["status"] == "ok" for r in rows[:first])
    assert (stopped[0].get("thermal_after") or {}).get("cpu_cap_mhz") == 1200.0  # the cap, read where readable
    report = json.loads((run_dir / "report.json").read_text())
    (dev,) = report["devices"]
    assert dev["status_counts"].get("thermal_stop") == 1
    assert dev["thermal"].startswith("thermal status up to 3 (severe); CPU capped down to 1200 MHz (highest seen ")
    assert dev["thermal"].endswith("; 1 sample(s) stopped by the OS for heat")
    assert f"google-pixel-8: {dev['thermal']}" in (run_dir / "report.md").read_text()
