"""`edgefarm report RUN --format trace` of a real lab run: two phones, one with a
live fuel gauge and a temperature that follows its load. The trace must be valid Trace Event Format
(complete events only, each with a numeric ts and dur, phases inside their sample), hold one track per
device and every sample exactly once, and carry numeric temperature, current and memory counters."""

from __future__ import annotations

import json

from .gauge import GaugeSpec, ThermalSpec
from .test_energy import edgefarm

DEVICES = ("google-pixel-8", "samsung-sm-s921b")
LIMIT = 3


def test_trace_of_a_phone_run(adb_lab, tmp_path):
    out = tmp_path / "runs"
    with adb_lab.gauges({"pixel8": GaugeSpec(period_s=0.25)}, thermal={"pixel8": ThermalSpec()}):
        p = edgefarm(adb_lab, "run", "--devices", ",".join(DEVICES), "--modality", "text", "--limit", str(LIMIT),
                     "--out", str(out))  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    (run_dir,) = [d for d in out.iterdir() if d.is_dir()]
    t = edgefarm(adb_lab, "report", str(run_dir), "--format", "trace")
    assert t.returncode == 0, t.stderr[-2000:]
    trace = json.loads(t.stdout)
    events = trace["traceEvents"]
    assert {e["ph"] for e in events} <= {"M", "X", "C", "i"}  # complete events only: no B without its E
    names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert sorted(names.values()) == sorted(DEVICES)  # one track per device
    by_device = {name: [e for e in events if e["pid"] == pid] for pid, name in names.items()}
    for device, evs in by_device.items():
        rows = [json.loads(x) for x in (run_dir / "devices" / device / "results.jsonl").read_text().splitlines()]
        slices = [e for e in evs if e["ph"] == "X" and e["cat"] == "sample"]
        assert sorted(e["name"] for e in slices) == sorted(r["id"] for r in rows)  # every sample once
        for e in (e for e in evs if e["ph"] == "X"):
            assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float)) and e["dur"] >= 0
        for s in slices:  # the phases lie inside their sample, in order
            phases = [e for e in evs if e.get("cat") == "phase" and s["ts"] <= e["ts"] < s["ts"] + s["dur"]]
            assert [e["name"] for e in phases][-2:] == ["prefill", "decode"], phases
            assert all(e["ts"] + e["dur"] <= s["ts"] + s["dur"] + 0.01 for e in phases)
        starts = [s["ts"] for s in slices]
        assert starts == sorted(starts) and all(
            a["ts"] + a["dur"] <= b["ts"] + 0.01 for a, b in zip(slices, slices[1:])
        )  # back to back, never overlapping
        for c in (e for e in evs if e["ph"] == "C"):
            assert all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in c["args"].values())
    counters = {e["name"] for e in by_device["google-pixel-8"] if e["ph"] == "C"}
    assert {"temperature °C", "battery current mA", "memory MB", "thermal status"} <= counters, counters
