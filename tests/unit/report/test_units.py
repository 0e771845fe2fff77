"""--units' figures (report/units.py) on a report whose values are set by hand: a unit 15% slower on
every sample is named and the levels and spreads are what the arithmetic gives."""

from __future__ import annotations

import math

from orchestrator.report.types.device_row import DeviceRow
from orchestrator.report.types.run_report import RunReport
from orchestrator.report.types.sample_row import SampleCell, SampleRow
from orchestrator.report.units import unit_groups


def _row(name: str) -> DeviceRow:
    return DeviceRow(name, "adb", "Pixel 8", "Tensor G3", "cpu", 4, 4, 4, 100.0, "", 1.0, None, None, None, None,
                     None, None, None)  # fmt: skip


def test_a_unit_fifteen_percent_slower_is_named_and_no_other():
    walls = [100.0, 200.0, 150.0, 300.0, 120.0, 250.0]
    jitter = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98]
    units = {"a": 1.0, "b": 1.0, "c": 1.15}
    samples = tuple(
        SampleRow(f"s{i}", "text", "qa", {u: SampleCell("ok", True, 1.0, 10.0, 20.0, "x", wall_ms=w * f * (j if u == "b" else 1.0))
                                           for u, f in units.items()})
        for i, (w, j) in enumerate(zip(walls, jitter))
    )  # fmt: skip
    report = RunReport(3, "r", {}, tuple(_row(u) for u in units), samples)
    (g,) = unit_groups({"pixel-8-x3": list(units)}, report)
    wall = next(f for f in g.figures if f.field == "wall_ms")
    assert wall.samples == 6
    assert math.isclose(wall.against_others["c"][0], 1.15, rel_tol=0.01)
    assert wall.against_others["c"][1] > 1.1  # its interval is far from 1
    assert wall.within_cv < 0.02 < wall.between_cv and wall.between_cv_ci[0] <= wall.between_cv <= wall.between_cv_ci[1]
    assert [o for o in g.outliers if "Time per sample" in o] == [
        f"c stands out on Time per sample: {wall.against_others['c'][0]:.2f}x the other units' median "
        f"(95% {wall.against_others['c'][1]:.2f}–{wall.against_others['c'][2]:.2f}), 15% slower"
    ]
    decode = next(f for f in g.figures if f.field == "decode_tps")
    assert decode.between_cv == 0.0 and not [o for o in g.outliers if "Decode" in o]  # equal everywhere


def test_a_group_without_two_units_in_the_report_is_left_out():
    report = RunReport(3, "r", {}, (_row("a"),), ())
    assert unit_groups({"g": ["a", "gone"]}, report) == ()
