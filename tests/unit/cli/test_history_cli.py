"""`edgefarm history` through click: a mistyped --db is refused (exit 2) and creates nothing; --fail-on
exits 8 on a change at the latest run only; `history exclude` records, shows and undoes an exclusion."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from click.testing import CliRunner

from orchestrator.cli import main
from orchestrator.history.db import opened
from orchestrator.history.entry import run_entry
from orchestrator.history.store import write_run

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "history"))
from history_runs import report


def _db(tmp_path, ms_per_run):
    path = tmp_path / "h.sqlite"
    with opened(str(path)) as db:
        for i, ms in enumerate(ms_per_run):
            rep = report(
                f"2026010{i + 1}-000000-00{i}a", f"2026-01-0{i + 1}T00:00:00+00:00", {"s24": ms}, seed=i
            )
            write_run(db, run_entry(rep, f"/runs/{rep.run_id}", rep.run["device_versions"]))
    return str(path)


def _history(*args):
    return CliRunner().invoke(main, ["history", *args])


def test_a_mistyped_db_is_refused_with_exit_2_and_nothing_created(tmp_path):
    typo = tmp_path / "histroy.sqlite"
    for args in (["--db", str(typo)], ["export", "--format", "litert-md", "--db", str(typo)],
                 ["exclude", "r1", "--why", "x", "--db", str(typo)]):  # fmt: skip
        r = _history(*args)
        assert r.exit_code == 2, r.output
        assert f"there is no results database at {typo}" in r.output and "fix:" in r.output
    assert not typo.exists()


def test_fail_on_exits_8_when_the_latest_run_is_a_change_and_0_once_it_is_not_the_latest(tmp_path):
    db = _db(tmp_path, [120.0, 120.0, 120.0, 150.0])
    r = _history("--db", db, "--format", "md", "--fail-on", "regression")
    assert r.exit_code == 8, r.output
    assert "history --fail-on regression: s24: Time/sample worse in 20260104-000000-003a" in r.output
    assert _history("--db", db, "--format", "md", "--fail-on", "none").exit_code == 0
    db = _db(tmp_path / "b", [120.0, 120.0, 120.0, 90.0])  # an improvement: a change, not a regression
    assert _history("--db", db, "--format", "md", "--fail-on", "regression").exit_code == 0
    assert _history("--db", db, "--format", "md", "--fail-on", "any").exit_code == 8
    db = _db(tmp_path / "c", [120.0, 120.0, 120.0, 150.0, 120.0])  # the slow run was an outlier
    r = _history("--db", db, "--format", "md", "--fail-on", "any")
    assert r.exit_code == 0 and "○" in r.output, r.output


def test_an_excluded_run_is_shown_marked_and_not_judged_against(tmp_path):
    db = _db(tmp_path, [120.0, 200.0, 120.0, 120.0, 121.0])
    r = _history("exclude", "20260102-000000-001a", "--db", db)
    assert r.exit_code == 2 and "say why" in r.output
    r = _history("exclude", "/runs/20260102-000000-001a", "--why", "a CPU hog ran beside it", "--db", db)
    assert r.exit_code == 0 and "excluded (a CPU hog ran beside it)" in r.output, r.output
    assert _history("exclude", "nope", "--why", "x", "--db", db).exit_code == 2
    assert (
        _history("exclude", "20260102-000000-001a", "--why", "x", "--device", "s99", "--db", db).exit_code
        == 2
    )
    md = _history("--db", db, "--format", "md").output
    row = next(x for x in md.splitlines() if x.startswith("| 20260102-000000-001a"))
    assert (
        "✗" in row
        and row.endswith("| excluded: a CPU hog ran beside it |")
        and "✗ excluded (`history exclude`)" in md
    )
    last = next(x for x in md.splitlines() if x.startswith("| 20260105-000000-004a"))
    assert last.endswith("| 3 runs |"), last  # runs 1, 3 and 4: the excluded one not counted
    r = _history("exclude", "20260102-000000-001a", "--undo", "--db", db)
    assert r.exit_code == 0 and "judged again" in r.output
    assert "✗" not in _history("--db", db, "--format", "md").output


def test_a_loaded_run_is_named_beside_its_figures_and_in_its_change(tmp_path):
    path = tmp_path / "h.sqlite"
    with opened(str(path)) as db:
        for i, (ms, cores) in enumerate([(120.0, 0.1), (120.0, 0.1), (120.0, 0.2), (180.0, 1.6)]):
            rep = report(f"2026010{i + 1}-000000-00{i}a", f"2026-01-0{i + 1}T00:00:00+00:00", {"s24": ms}, seed=i,
                         other_cores=cores)  # fmt: skip
            write_run(db, run_entry(rep, f"/runs/{rep.run_id}", rep.run["device_versions"]))
    md = _history("--db", str(path), "--format", "md").output
    rows = [x for x in md.splitlines() if x.startswith("| 2026")]
    assert [x.split(" | ")[3] for x in rows] == ["–", "–", "–", "LOADED"], rows
    assert "- Conditions: what was bad during the run" in md
    assert "this run was LOADED (its report says how): if that disturbed it, `history exclude`" in md
    data = json.loads(_history("--db", str(path), "--format", "json").output)
    (point,) = [p for p in data["series"][0]["points"] if p["run_id"] == "20260104-000000-003a"]
    assert point["conditions"][0].startswith("LOADED: this host: other processes used 1.60 cores")
