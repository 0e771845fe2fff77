"""Trends from the database: a 10% slowdown at a runtime change is flagged at that run only, naming
the device, the figure and the versions; stability beside each figure; md, csv and json views."""

from __future__ import annotations

import csv
import io
import json

from history_runs import report

from orchestrator.history.db import opened
from orchestrator.history.entry import run_entry
from orchestrator.history.html import render_page
from orchestrator.history.record import changes_of
from orchestrator.history.render import to_csv, to_json, to_md
from orchestrator.history.series import build_series
from orchestrator.history.store import read_history, read_samples, write_run

RUNS = [  # (runtime, s24's ms per sample): s24 10% slower from 0.18 on; pixel-8 100 ms throughout
    ("0.17.0", 120.0), ("0.17.0", 120.0), ("0.18.0", 132.0), ("0.18.0", 132.0), ("0.19.0", 132.0),
]  # fmt: skip


def _history(db):
    entries = []
    for i, (runtime, s24) in enumerate(RUNS):
        rep = report(f"2026010{i + 1}-000000-00{i}a", f"2026-01-0{i + 1}T00:00:00+00:00",
                     {"pixel-8": 100.0, "s24": s24}, runtime=runtime, seed=10 * i)  # fmt: skip
        entry = run_entry(rep, f"/runs/{rep.run_id}", rep.run["device_versions"])
        write_run(db, entry)
        entries.append(entry)
    return entries


def test_a_slowdown_is_flagged_at_its_run_only_with_the_device_figure_and_versions(tmp_path):
    with opened(str(tmp_path / "h.sqlite")) as db:
        entries = _history(db)
        at_end = [changes_of(db, e) for e in entries]  # what each run says at its end
        series = build_series(read_history(db), lambda r, d: read_samples(db, r, d), window=5)
    assert [bool(c) for c in at_end] == [False, False, True, False, False]
    flagged = {(c.device, c.field) for c in at_end[2]}
    assert flagged == {("s24", "wall_ms"), ("s24", "ttft_ms")}, at_end[2]
    c = next(c for c in at_end[2] if c.field == "wall_ms")
    assert c.worse and 1.08 < c.lo <= c.ratio <= c.hi < 1.12 and c.previous_run_id == entries[1].run_id
    assert c.versions == "runtime 0.17.0 → 0.18.0"
    assert "s24: Time per sample worse in 20260103-000000-002a" in c.text() and "0.17.0 → 0.18.0" in c.text()
    pixel, s24 = series
    assert (pixel.device, s24.device) == ("pixel-8", "s24") and len(s24.points) == 5
    assert pixel.changes == () and [x.run_id for x in s24.changes] == [entries[2].run_id] * 2
    # stability: pixel-8's runs agree to well under 1%; s24's scatter (the step) shows in its CV
    stab = {x.figure: x for x in pixel.stability}
    assert stab["sample_ms_p50"].runs == 5 and stab["sample_ms_p50"].cv_pct < 0.5
    assert 1.0 <= stab["sample_ms_p50"].p99_p50 < 1.01
    assert {x.figure: x for x in s24.stability}["sample_ms_p50"].cv_pct > 3
    assert s24.rolling_sd["sample_ms_p50"][0] is None and s24.rolling_sd["sample_ms_p50"][-1] > 4


def test_the_views_show_the_figures_their_intervals_and_the_flag(tmp_path):
    with opened(str(tmp_path / "h.sqlite")) as db:
        _history(db)
        series = build_series(read_history(db), lambda r, d: read_samples(db, r, d), last=3)
    assert [len(s.points) for s in series] == [3, 3]
    assert [x.run_id for x in series[1].changes] == [
        "20260103-000000-002a"
    ] * 2  # the run before the 3 compared too
    md = to_md(series)
    assert "## s24 (Pixel)" in md and "| 20260103-000000-002a |" in md and "⚠" in md
    assert "Stability over the last runs: TTFT p50 CV" in md and "; Time/sample CV" in md
    assert "- s24: Time per sample worse in 20260103-000000-002a than in 20260102-000000-001a" in md
    rows = list(csv.DictReader(io.StringIO(to_csv(series))))
    flagged = [r for r in rows if r["change"]]
    assert {(r["device"], r["run_id"], r["figure"]) for r in flagged} == {
        ("s24", "20260103-000000-002a", "sample_ms_p50"), ("s24", "20260103-000000-002a", "ttft_ms_p50")}  # fmt: skip
    data = json.loads(to_json(series))
    point = data["series"][0]["points"][0]
    assert set(point["figures"]["sample_ms_p50"]) == {"value", "lo", "hi"}
    page = render_page(series)
    assert page.count("<svg") >= 2 * 4 and "file:///runs/20260103-000000-002a/report.html" in page
    assert "Content-Security-Policy" in page and "#d62728" in page
