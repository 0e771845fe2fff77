"""★ best only on an interval clear of every other device's; "tied" on overlaps; a partial device
never marked (report/best.py), and the tables built from it (cells.device_table)."""

from __future__ import annotations

from dataclasses import replace

from orchestrator.report.best import BEST, TIED, Entry, marks
from orchestrator.report.cells import device_table
from orchestrator.report.types.device_row import DeviceRow
from orchestrator.report.types.run_report import RunReport


def e(v, lo=None, hi=None, eligible=True):
    return Entry(v, (lo, hi) if lo is not None else None, f"{v}", eligible)


def test_a_leader_clear_of_every_other_interval_is_best_and_overlaps_are_tied():
    assert marks([e(10, 9, 11), e(20, 19, 21), e(5, 4, 6)], higher_is_better=True) == ["", BEST, ""]
    assert marks([e(10, 9, 11), e(20, 19, 21), e(5, 4, 6)], higher_is_better=False) == ["", "", BEST]
    # the leader's interval overlaps the runner-up's: both tied, the third (clear below) unmarked
    assert marks([e(10, 8, 12), e(11, 9, 13), e(5, 4, 6)], higher_is_better=True) == [TIED, TIED, ""]


def test_equal_values_one_device_or_no_interval_mark_nothing():
    assert marks([e(10, 9, 11), e(10, 9, 11)], True) == ["", ""]
    assert marks([e(10, 9, 11), e(None)], True) == ["", ""]
    assert marks([e(10), e(20)], True) == ["", ""]  # the leader has no interval: nothing is known


def test_a_partial_device_is_never_marked_nor_ranked():
    # the interrupted device is fastest, on another sample mix: the complete devices are ranked alone
    assert marks([e(30, 29, 31, False), e(20, 19, 21), e(10, 9, 11)], True) == ["", BEST, ""]
    assert marks([e(30, 20, 40, False), e(25, 24, 26), e(24.5, 24, 25)], True) == ["", TIED, TIED]
    assert marks([e(30, 29, 31, False), e(None)], True) == ["", ""]


def _row(name: str, decode: float, ci: tuple[float, float], partial: str = "") -> DeviceRow:
    return DeviceRow(device=name, kind="adb", hardware="Pixel 8", soc="Tensor G3", backend="cpu", samples=200,
                     scored=200, passed=100, pass_rate_pct=50.0, verdict="", init_ms=None, ttft_ms_p50=None,
                     ttft_ms_p90=None, prefill_tps_p50=None, decode_tps_p50=decode, peak_rss_mb=None,
                     peak_anon_mb=None, wall_s=None, intervals={"decode_tps_p50": ci}, partial=partial)  # fmt: skip


def test_the_table_says_interrupted_and_never_marks_that_device():
    rows = (
        _row("a", 20, (19, 21)),
        _row("b", 10, (9, 11)),
        _row("cut", 40, (39, 41), "interrupted: 100/200"),
    )
    report = RunReport(schema_version=3, run_id="r", run={}, devices=rows)
    headers, cells = device_table(report)
    col = headers.index("Decode (tok/s)")
    assert [c[col].mark for c in cells] == [BEST, "", ""]
    assert cells[2][-1].value.startswith("interrupted: 100/200")
    headers, cells = device_table(
        replace(
            report,
            devices=(rows[0], replace(rows[1], decode_tps_p50=18.6, intervals={"decode_tps_p50": (18, 20)})),
        )
    )
    assert [c[headers.index("Decode (tok/s)")].marked() for c in cells] == [
        "20 (19–21) tied",
        "19 (18–20) tied",
    ]
