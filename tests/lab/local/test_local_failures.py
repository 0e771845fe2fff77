"""A runner that crashes, is killed for memory or hangs mid-run: the run goes on, nothing is lost."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .conftest import edgefarm

HERE = Path(__file__).resolve().parent


def _python_wrapper(tmp_path: Path) -> str:
    wrapper = tmp_path / "python-with-faults"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{HERE / "faulty_runner.py"}" "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper)


def _text_ids(n: int) -> list[str]:
    rows = [
        json.loads(x)
        for x in (HERE.parents[2] / "data/edgemmeval/data/test/metadata.jsonl").read_text().splitlines()
    ]
    return [r["test_id"] for r in rows if r["modality"] == "text"][:n]


def test_crash_oom_and_hang_are_recorded_and_the_rest_still_runs(tmp_path, local_inventory):
    ids = _text_ids(6)
    out = tmp_path / "runs"
    faults = f"KILL={ids[1]},ABORT={ids[2]},HANG={ids[4]}"
    p = edgefarm(
        "run",
        "--devices",
        "local",
        "--inventory",
        str(local_inventory(_python_wrapper(tmp_path))),
        "--modality",
        "text",
        "--limit",
        "6",
        "--max-output-tokens",
        "8",
        "--sample-timeout",
        "3",
        "--out",
        str(out),
        env={"EDGEFARM_TEST_FAULTS": faults},
    )
    assert p.returncode == 0, p.stderr
    run_dir = next(out.iterdir())
    dev = run_dir / "devices" / "this-host"
    results = {r["id"]: r for r in map(json.loads, (dev / "results.jsonl").read_text().splitlines())}
    assert list(results) == ids  # job order, every sample exactly once
    assert results[ids[1]]["status"] == "oom" and results[ids[1]]["signal"] == 9
    assert results[ids[2]]["status"] == "crash" and results[ids[2]]["signal"] == 6
    assert results[ids[4]]["status"] == "timeout" and "3 s" in results[ids[4]]["error"]
    for i in (0, 3, 5):
        assert results[ids[i]]["status"] == "ok"
    scored = json.loads((dev / "results.json").read_text())
    assert scored[ids[1]] == "" and scored[ids[0]] == results[ids[0]]["output"]
    report = json.loads((dev / "report.json").read_text())
    assert report["summary"]["total_scored"] == 6  # failed samples count as failures, not skips
    notes = json.loads((dev / "outcome.json").read_text())["notes"]
    assert sum("restarted" in n for n in notes) == 2


def test_resume_runs_only_what_is_missing(tmp_path, local_inventory):
    inv = local_inventory()
    out = tmp_path / "runs"
    args = (
        "run",
        "--devices",
        "local",
        "--inventory",
        str(inv),
        "--modality",
        "text",
        "--limit",
        "5",
        "--max-output-tokens",
        "8",
        "--out",
        str(out),
    )
    assert edgefarm(*args).returncode == 0
    run_dir = next(out.iterdir())
    device_results = next((tmp_path / "work" / "runs").iterdir()) / "job" / "results.jsonl"
    lines = device_results.read_text().splitlines()
    device_results.write_text("\n".join(lines[:3]) + "\n")  # as if the device stopped after 3 samples
    p = edgefarm(*args, "--resume", str(run_dir))
    assert p.returncode == 0, p.stderr
    outcome = json.loads((run_dir / "devices" / "this-host" / "outcome.json").read_text())
    assert any("2 sample(s) to run" in n for n in outcome["notes"]), outcome["notes"]
    final = (run_dir / "devices" / "this-host" / "results.jsonl").read_text().splitlines()
    assert len(final) == 5


def test_resume_refuses_a_different_selection(tmp_path, local_inventory):
    inv = local_inventory()
    out = tmp_path / "runs"
    base = (
        "run",
        "--devices",
        "local",
        "--inventory",
        str(inv),
        "--modality",
        "text",
        "--max-output-tokens",
        "4",
        "--out",
        str(out),
    )
    assert edgefarm(*base, "--limit", "1").returncode == 0
    run_dir = next(out.iterdir())
    p = edgefarm(*base, "--limit", "2", "--resume", str(run_dir))
    assert p.returncode == 2 and "differs" in p.stderr


def test_cooldown_waits_for_a_hot_board_and_records_the_wait(tmp_path, local_inventory):
    out = tmp_path / "runs"
    p = edgefarm(
        "run",
        "--devices",
        "local",
        "--inventory",
        str(local_inventory(_python_wrapper(tmp_path))),
        "--modality",
        "text",
        "--limit",
        "3",
        "--max-output-tokens",
        "4",
        "--cooldown-c",
        "40",
        "--out",
        str(out),
        env={"EDGEFARM_TEST_THERMAL": "43,2"},
    )
    assert p.returncode == 0, p.stderr
    dev = next(out.iterdir()) / "devices" / "this-host"
    rows = [json.loads(x) for x in (dev / "results.jsonl").read_text().splitlines()]
    assert 1.0 <= rows[0]["cooldown_s"] <= 3.0  # 43 C -> 40 C at 2 C/s
    assert all(r["cooldown_s"] == 0.0 for r in rows[1:])  # already cool
    assert rows[0]["thermal_before"]["max_temp_c"] <= 40.0
    assert json.loads((next(out.iterdir()) / "run.json").read_text())["flags"]["cooldown_c"] == 40


def test_cooldown_without_a_sensor_says_so(tmp_path, local_inventory):
    out = tmp_path / "runs"
    p = edgefarm(
        "run",
        "--devices",
        "local",
        "--inventory",
        str(local_inventory(_python_wrapper(tmp_path))),
        "--modality",
        "text",
        "--limit",
        "2",
        "--max-output-tokens",
        "4",
        "--cooldown-c",
        "40",
        "--out",
        str(out),
        env={"EDGEFARM_TEST_THERMAL": "none"},
    )
    assert p.returncode == 0, p.stderr
    assert "no thermal sensor is readable" in p.stderr  # said once, not silently skipped
    assert p.stderr.count("no thermal sensor") == 1
    dev = next(out.iterdir()) / "devices" / "this-host"
    rows = [json.loads(x) for x in (dev / "results.jsonl").read_text().splitlines()]
    assert [r["cooldown_s"] for r in rows] == [None, None]
