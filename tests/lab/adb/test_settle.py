"""--settle on lab phones whose temperatures follow a script (tests/lab/adb/gauge.py TemperatureScript):
the Pixel is hot (45 °C) at the block gate's first reading and falls towards 33 °C (time constant
0.8 s), then stays flat: its block starts only once no sensor moved 0.5 °C over 2 s, the wait recorded with the
start and end readings. The Galaxy warms 1 °C a second without end: it is measured at the maximum wait
and flagged in report.json, report.md and its status, never marked best."""

from __future__ import annotations

import json
import math

from .test_energy import edgefarm

WINDOW_S, LIMIT_C, MAX_S = 2.0, 0.5, 10.0


def _first_reading_taken(lab, label):
    """The gate's first reading is in its log (job/samples/N/settle.log not empty): the curve starts then,
    so that reading is the curve's start value however late a loaded host gets to it (the curve starting
    at the gate's `settled` mark instead had fallen below 42 °C before a slow first reading)."""
    runs = lab.device_root(label) / "local" / "tmp" / "edgefarm" / "runs"
    pattern = "*/job/samples/*/settle.log"
    # an earlier test's settled run (bench and ab settle by default) leaves its logs on the phone: only
    # this run's count, or the curve starts falling while this run is still staging
    earlier = set(runs.glob(pattern)) if runs.is_dir() else set()

    def taken() -> bool:
        for log in set(runs.glob(pattern)) - earlier if runs.is_dir() else ():
            try:
                if log.stat().st_size > 0:
                    return True
            except FileNotFoundError:
                continue
        return False

    return taken


def test_settle_waits_for_a_cooling_phone_and_flags_one_that_never_settles(adb_lab, tmp_path):
    out = tmp_path / "runs"
    cooling = lambda t: 33.0 + 12.0 * math.exp(-t / 0.8)  # noqa: E731
    warming = lambda t: 30.0 + t  # noqa: E731
    with adb_lab.temperature("pixel8", cooling, _first_reading_taken(adb_lab, "pixel8")), \
         adb_lab.temperature("s24", warming, _first_reading_taken(adb_lab, "s24")):  # fmt: skip
        p = edgefarm(adb_lab, "run", "--devices", "google-pixel-8,samsung-sm-s921b", "--modality", "text",
                     "--limit", "2", "--settle", "--settle-c", str(LIMIT_C), "--settle-s", str(WINDOW_S),
                     "--settle-max-s", str(MAX_S), "--out", str(out))  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    (run_dir,) = [d for d in out.iterdir() if d.is_dir()]
    rows = {d: [json.loads(x) for x in (run_dir / "devices" / d / "results.jsonl").read_text().splitlines()]
            for d in ("google-pixel-8", "samsung-sm-s921b")}  # fmt: skip
    pixel, first = rows["google-pixel-8"][0]["settle"], rows["google-pixel-8"][0]
    print(json.dumps(pixel), json.dumps(rows["samsung-sm-s921b"][0]["settle"]))
    assert pixel["settled"] is True and WINDOW_S <= pixel["waited_s"] < MAX_S
    assert pixel["start_c"]["battery"] >= 42.0 and pixel["end_c"]["battery"] <= 34.5  # it fell, then flattened
    assert {"BIG", "VIRTUAL-SKIN"} <= set(pixel["start_c"])  # every sensor it has: CPU and skin too
    # the block started only after it settled: the sample's own reading is the flat temperature
    assert first["thermal_before"]["battery_temp_c"] <= 34.5
    assert all(r.get("settle") is None for r in rows["google-pixel-8"][1:])  # once per block
    galaxy = rows["samsung-sm-s921b"][0]["settle"]
    assert galaxy["settled"] is False and MAX_S <= galaxy["waited_s"] < MAX_S + 5
    assert galaxy["span_c"] >= LIMIT_C and galaxy["end_c"]["battery"] > galaxy["start_c"]["battery"]
    assert all(r["status"] == "ok" for r in rows["samsung-sm-s921b"])  # measured, not dropped
    report = json.loads((run_dir / "report.json").read_text())
    devs = {d["device"]: d for d in report["devices"]}
    assert devs["google-pixel-8"]["unsettled"] == "" and devs["google-pixel-8"]["settle"][0]["settled"] is True
    assert devs["samsung-sm-s921b"]["unsettled"].startswith("unsettled: 1 block(s)")
    md = (run_dir / "report.md").read_text()
    assert "## Conditions (thermal state, --settle" in md and "samsung-sm-s921b: NOT settled after" in md
    assert "google-pixel-8: settled after" in md
    assert "Conditions" in (run_dir / "report.html").read_text()
    trace = json.loads(edgefarm(adb_lab, "report", str(run_dir), "--format", "trace").stdout)["traceEvents"]
    assert {e["name"] for e in trace if e["ph"] == "i" and e["cat"] == "wait"} == {"settle", "settle: NOT settled"}
