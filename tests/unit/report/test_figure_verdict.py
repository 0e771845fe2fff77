"""One verdict per figure (report/verdict.py, issue 41): the table's ★ / tied is the paired test's
verdict, the same in the terminal, report.md, report.html and the paired line under the table.

Before, the table marked TTFT "tied" (each device's own interval overlapped the other's: the samples'
spread) while the line under it said "TTFT 0.87x (...): b better" (the paired test on the same
samples); the baseline's speed-up read "1.00 ★" against itself."""

from __future__ import annotations

import re

from android_runner.contract import SampleResult
from orchestrator.devices.types import DeviceInfo
from orchestrator.farm.run_json import RunJson
from orchestrator.farm.types import DeviceOutcome
from orchestrator.report.best import BEST, TIED
from orchestrator.report.cells import BEST_NOTE, device_table
from orchestrator.report.combine import build_report, device_row, sample_rows
from orchestrator.report.facts import paired_lines
from orchestrator.report.printers import PRINTERS
from orchestrator.report.terminal import to_text

IDS = [f"s{i:02d}" for i in range(30)]
RUN = {"run_id": "20260101-000000-abcd", "dataset": {"samples_run": len(IDS)}, "flags": {}}


def _rows(ttft_scale: float, wall_scale: float) -> list[SampleResult]:
    # spread over samples (10..300 ms): each device's own median interval is wide, the pairs are tight
    return [SampleResult(id=i, status="ok", output="yes", ttft_ms=10.0 * (1 + n) * ttft_scale,
                         wall_ms=100.0 * (1 + n) * wall_scale, decode_tps=20.0 + n % 3, prefill_tps=100.0)
            for n, i in enumerate(IDS)]  # fmt: skip


def _score() -> dict:
    rows = [{"test_id": i, "modality": "text", "task": "qa", "metric": "bleu1", "score": 1.0, "passed": True,
             "reference": "yes"} for i in IDS]  # fmt: skip
    n = len(rows)
    return {"scorer": "edgemmeval", "summary": {"total_scored": n, "total_passed": n, "overall_avg": 1.0,
            "pass_rate_pct": 100.0, "verdict": "", "skipped": []}, "by_modality": {}, "samples": rows}  # fmt: skip


def _report(ttft_b: float, wall_b: float = 1.0):
    per = {"host-t1": (_rows(1.0, 1.0), _score()), "host-t2": (_rows(ttft_b, wall_b), _score())}
    rows = [device_row(DeviceInfo(name=n, kind="local"), DeviceOutcome.from_dict({"wall_s": 1.0}), *per[n])
            for n in per]  # fmt: skip
    return build_report(
        RunJson.from_dict(RUN), rows, sample_rows(per), finished_at="2026-01-01T00:01:00+00:00"
    )


def _marks(report, header: str) -> list[str]:
    headers, cells = device_table(report, wide=True)
    return [row[headers.index(header)].mark for row in cells]


def test_a_paired_difference_the_intervals_cannot_see_is_one_verdict_everywhere():
    report = _report(ttft_b=0.87, wall_b=0.5)
    intervals = report.devices[0].intervals["ttft_ms_p50"], report.devices[1].intervals["ttft_ms_p50"]
    assert intervals[1][1] > intervals[0][0]  # each device's own intervals overlap: the old rule said tied
    assert _marks(report, "TTFT p50 (ms)") == ["", BEST]
    line = next(x for x in paired_lines(report) if x.startswith("host-t2 vs host-t1"))
    assert re.search(r"TTFT 0\.87x \([0-9.]+–[0-9.]+\): host-t2 better", line), line
    term = to_text(report, width=250, wide=True).splitlines()
    head = next(i for i, x in enumerate(term) if x.startswith("┡"))
    col = next(
        n
        for n, x in enumerate(term[head - 1].split("┃"))
        if "(ms)" in x and "TTFT" in term[head - 2].split("┃")[n]
    )
    assert [x.split("│")[col].strip() for x in term[head + 1 : head + 3]] == ["155.0", "134.8 ★"]
    md = PRINTERS.get("md")(report).splitlines()
    col = next(x for x in md if x.startswith("| Device ")).split(" | ").index("TTFT p50 (ms)")
    assert [next(x for x in md if x.startswith(f"| {d} ")).split(" | ")[col] for d in ("host-t1", "host-t2")] == [
        "155.0 (100.0–205.0)", "**134.8 (87.0–178.3)** ★"]  # fmt: skip
    html = PRINTERS.get("html")(report)
    assert "<td class='best'><span class='v'>134.8 ★</span>" in html  # host-t2's TTFT: best, as in the line
    assert "<span class='v'>155.0</span>" in html and "155.0<span class='tied'>" not in html


def test_the_baseline_is_never_best_against_itself_and_no_difference_is_tied_in_every_view():
    report = _report(ttft_b=1.01, wall_b=2.0)  # host-t1 (the baseline) twice as fast; TTFT within noise
    headers, cells = device_table(report)
    speed = headers.index("Speed-up vs host-t1 (x)")
    assert cells[0][speed].value == "1.00" and cells[0][speed].mark == ""  # not "1.00 ★" against itself
    assert _marks(report, "Time/sample (ms)") == [BEST, ""]
    assert _marks(report, "TTFT p50 (ms)") == [TIED, TIED]  # 1% apart: the pair cannot tell them apart
    line = next(x for x in paired_lines(report) if x.startswith("host-t2 vs host-t1"))
    assert "TTFT 1.01x (1.01–1.01): no significant difference" in line, line
    assert _marks(report, "Pass (%)") == ["", ""]  # both 100.0, no flip: nothing to mark
    assert "1.00 ★" not in to_text(report, width=250) and "1.00 (baseline) ★" not in PRINTERS.get("md")(
        report
    )


def test_the_legend_says_parentheses_where_the_intervals_are():
    assert "(in parentheses)" in BEST_NOTE and "bracket" not in BEST_NOTE


def test_a_setting_that_differs_is_never_dropped_before_a_figure_at_100_columns():
    from dataclasses import replace

    report = _report(ttft_b=0.87, wall_b=0.5)
    report = replace(report, devices=tuple(replace(d, threads=n, peak_rss_mb=123.0, status_counts={"ok": 30, "timeout": 2})
                                           for n, d in enumerate(report.devices, 1)))  # fmt: skip
    text = to_text(report, width=100)
    head = "\n".join(x for x in text.splitlines()[:8] if x.startswith("┃"))
    assert "Threads" in head and "Peak RSS" not in head, (
        text
    )  # the figure went under the table, not the setting
    assert "host-t2: " in text and "Peak RSS 123 MB" in text
    narrow = to_text(report, width=80)  # tighter still: figures go before the setting
    assert "Threads" in "\n".join(x for x in narrow.splitlines()[:8] if x.startswith("┃")), narrow
    assert max(len(x) for x in text.splitlines() if x.startswith(("┃", "│"))) <= 100
    assert "host-t2: " in text and "Decode" in text  # what did not fit is said under the table
