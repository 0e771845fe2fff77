"""The trace printer's markers: cooldown waits move the timeline, failed samples and stalls are marked."""

from __future__ import annotations

import json

from orchestrator.report.printers import PRINTERS
from orchestrator.report.trace import STALL_FACTOR
from orchestrator.report.types.device_row import DeviceRow
from orchestrator.report.types.run_report import RunReport
from orchestrator.report.types.sample_row import SampleCell, SampleRow


def _row(device: str) -> DeviceRow:
    return DeviceRow(device, "adb", "Pixel 8", "Tensor G3", "cpu", 3, 3, 2, 66.7, "", 500.0, None, None,
                     None, None, None, None, None)  # fmt: skip


def _cell(status: str = "ok", wall: float = 100.0, **kw) -> SampleCell:
    return SampleCell(status, True, 1.0, 20.0, 50.0, "x", wall_ms=wall, infer_ms=wall - 10, **kw)


def test_markers_and_layout():
    slow = 100.0 * (STALL_FACTOR + 1)
    samples = (
        SampleRow("a", "text", "qa", {"p": _cell(cooldown_s=2.0, thermal_c=41.5)}),
        SampleRow("b", "text", "qa", {"p": _cell("timeout", 50.0, error="no answer in 300 s")}),
        SampleRow("c", "text", "qa", {"p": _cell(wall=slow)}),
        SampleRow("d", "text", "qa", {"p": _cell()}),
    )
    events = json.loads(PRINTERS.get("trace")(RunReport(3, "r", {}, (_row("p"),), samples)))["traceEvents"]
    slices = {e["name"]: e for e in events if e.get("cat") == "sample"}
    assert slices["a"]["ts"] == 500_000 + 2_000_000  # after the engine load and the cooldown wait
    marks = [(e["name"], e["args"].get("sample")) for e in events if e["ph"] == "i"]
    assert marks == [("cooldown wait", "a"), ("failed: timeout", "b"), ("stall", "c")]
    assert slices["d"]["ts"] == slices["c"]["ts"] + slow * 1000
    assert [e["args"] for e in events if e["ph"] == "C" and e["name"].startswith("temperature")] == [{"c": 41.5}]
