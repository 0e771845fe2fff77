"""Trends from the database: a 10% slowdown at a runtime change is flagged at that run only, naming
the device, the figure and the versions; stability beside each figure; md, csv and json views."""

from __future__ import annotations

import csv
import io
import json

from history_runs import report
from rich.console import Console

from orchestrator.history.db import opened
from orchestrator.history.entry import run_entry
from orchestrator.history.html_page import render_page
from orchestrator.history.record import changes_of
from orchestrator.history.render import to_csv, to_json, to_md
from orchestrator.history.series import build_series
from orchestrator.history.store import read_history, read_samples, write_run
from orchestrator.history.term import to_term

RUNS = [  # (runtime, s24's ms per sample): s24 10% slower from 0.18 on; pixel-8 100 ms throughout
    ("0.17.0", 120.0), ("0.17.0", 120.0), ("0.17.0", 120.0), ("0.18.0", 132.0), ("0.18.0", 132.0),
    ("0.19.0", 132.0),
]  # fmt: skip
STEP = 3  # the first 0.18.0 run


def _history(db):
    """Each run written, then judged, as at the end of `edgefarm run`: (entries, what each run said)."""
    entries, said = [], []
    for i, (runtime, s24) in enumerate(RUNS):
        rep = report(f"2026010{i + 1}-000000-00{i}a", f"2026-01-0{i + 1}T00:00:00+00:00",
                     {"pixel-8": 100.0, "s24": s24}, runtime=runtime, seed=10 * i)  # fmt: skip
        entry = run_entry(rep, f"/runs/{rep.run_id}", rep.run["device_versions"])
        write_run(db, entry)
        entries.append(entry)
        said.append(changes_of(db, entry))
    return entries, said


def test_a_slowdown_is_flagged_at_its_run_only_with_the_device_figure_and_versions(tmp_path):
    with opened(str(tmp_path / "h.sqlite")) as db:
        entries, said = _history(db)
        series = build_series(read_history(db), lambda r, d: read_samples(db, r, d), window=5)
    at_end = [found for found, _ in said]
    assert [bool(c) for c in at_end] == [i == STEP for i in range(len(RUNS))], at_end
    flagged = {(c.device, c.figure) for c in at_end[STEP]}
    assert flagged == {("s24", "sample_ms_p50"), ("s24", "ttft_ms_p50"), ("s24", "ttft_ms_p90")}, at_end[STEP]
    c = next(c for c in at_end[STEP] if c.figure == "sample_ms_p50")
    assert c.worse and 1.08 < c.ratio < 1.12 and c.runs == 3 and c.confirmed is None  # the next run will tell
    assert c.lo < c.mean < c.hi < c.value and c.previous_run_id == entries[STEP - 1].run_id
    assert c.versions == "runtime 0.17.0 → 0.18.0"
    assert c.text().startswith("s24: Time/sample worse in 20260104-000000-003a: ")
    assert "1.10x the mean of the 3 comparable runs before it" in c.text() and "0.17.0 → 0.18.0" in c.text()
    # the run after it confirms it, in words, and is not flagged again
    assert said[STEP + 1][1] and all("confirmed by this run" in x and "s24" in x for x in said[STEP + 1][1])
    assert [bool(x) for _, x in said] == [i == STEP + 1 for i in range(len(RUNS))]
    pixel, s24 = series
    assert (pixel.device, s24.device) == ("pixel-8", "s24") and len(s24.points) == len(RUNS)
    assert pixel.changes == () and [x.run_id for x in s24.changes] == [entries[STEP].run_id] * 3
    assert s24.changes[0].confirmed is True
    states = [j.state for j in s24.judgements["sample_ms_p50"]]
    assert states == ["few", "few", "few", "change", "follows", "follows"], states
    assert [j.state for j in pixel.judgements["sample_ms_p50"]] == ["few"] * 3 + ["usual"] * 3
    # stability: pixel-8's runs agree to well under 1%; s24's scatter (the step) shows in its CV
    stab = {x.figure: x for x in pixel.stability}
    assert stab["sample_ms_p50"].runs == 5 and stab["sample_ms_p50"].cv_pct < 0.5
    assert 1.0 <= stab["sample_ms_p50"].p99_p50 < 1.01
    assert {x.figure: x for x in s24.stability}["sample_ms_p50"].cv_pct > 3
    assert s24.rolling_sd["sample_ms_p50"][0] is None and s24.rolling_sd["sample_ms_p50"][-1] > 4


def test_the_views_show_the_figures_the_marks_their_legend_and_the_runs_judged_against(tmp_path):
    with opened(str(tmp_path / "h.sqlite")) as db:
        _history(db)
        series = build_series(read_history(db), lambda r, d: read_samples(db, r, d), last=4)
    assert [len(s.points) for s in series] == [4, 4]
    step = "20260104-000000-003a"
    assert [x.run_id for x in series[1].changes] == [step] * 3  # judged on every run, 4 shown
    md = to_md(series)
    assert "## s24 (Pixel)" in md and f"| {step} |" in md
    assert "| Run | Started | Runtime | Pass" not in md  # not scored: no pass column
    assert "Time/sample (ms)" in md and "Judged against |" in md
    row = next(x for x in md.splitlines() if x.startswith(f"| {step} |") and "⚠" in x)
    assert "**132 (" in row and row.endswith("| 3 runs |"), row
    assert "not enough runs to judge (2 of 3)" in md  # the third run, shown for pixel-8
    assert "⚠ worse: outside the usual spread" in md and "✓" not in md  # the legend names only marks used
    assert (
        "Stability over the last 4 runs: TTFT p50: CV" in md and "; Time/sample: CV" in md and "e+" not in md
    )
    assert f"- s24: Time/sample worse in {step}: " in md
    rows = list(csv.DictReader(io.StringIO(to_csv(series))))
    flagged = [r for r in rows if r["change"]]
    assert {(r["device"], r["run_id"], r["figure"]) for r in flagged} == {
        ("s24", step, "sample_ms_p50"), ("s24", step, "ttft_ms_p50"), ("s24", step, "ttft_ms_p90")}  # fmt: skip
    assert {r["judged"] for r in rows if r["figure"] == "sample_ms_p50"} == {
        "few",
        "usual",
        "change",
        "follows",
    }
    data = json.loads(to_json(series))
    assert data["schema_version"] == 2
    point = data["series"][0]["points"][0]
    assert set(point["figures"]["sample_ms_p50"]) == {"value", "lo", "hi"}
    assert data["series"][1]["judgements"]["sample_ms_p50"][1]["state"] == "change"
    page = render_page(series)
    assert page.count("<svg") >= 2 * 4 and f"file:///runs/{step}/report.html" in page
    assert "Content-Security-Policy" in page and "#d62728" in page and "not enough runs" not in page


def test_an_improvement_is_marked_apart_from_a_regression_and_the_terminal_shows_units_and_a_legend(tmp_path):
    with opened(str(tmp_path / "h.sqlite")) as db:
        for i, ms in enumerate([120.0, 120.0, 120.0, 90.0]):
            rep = report(
                f"2026010{i + 1}-000000-00{i}a", f"2026-01-0{i + 1}T00:00:00+00:00", {"s24": ms}, seed=i
            )
            write_run(db, run_entry(rep, f"/runs/{rep.run_id}", rep.run["device_versions"]))
        series = build_series(read_history(db), lambda r, d: read_samples(db, r, d))
    (s24,) = series
    assert {c.worse for c in s24.changes} == {False}
    md = to_md(series)
    assert "✓" in md and "⚠" not in md and "✓ better: outside the usual spread" in md
    console = Console(record=True, width=200, color_system=None)
    to_term(series, console)
    text = console.export_text()
    assert "Time/sample (ms)" in text and "Decode (tok/s)" in text and "✓ 90.0" in text
    assert "✓ better: outside the usual spread" in text and "not enough runs to judge" in text
    assert "**" not in text and "|---" not in text and "e+0" not in text  # not Markdown, no exponents
