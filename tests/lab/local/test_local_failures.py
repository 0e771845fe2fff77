"""A runner that crashes, is killed for memory or hangs mid-run: the run goes on, nothing is lost."""

from __future__ import annotations

import json

from .conftest import BUNDLED, device_json, results, run_json


def _text_ids(n: int) -> list[str]:
    rows = [json.loads(x) for x in (BUNDLED / "data/test/metadata.jsonl").read_text().splitlines()]
    return [r["test_id"] for r in rows if r["modality"] == "text"][:n]


def test_crash_oom_and_hang_are_recorded_and_the_rest_still_runs(run_here):
    ids = _text_ids(6)
    faults = f"KILL={ids[1]},ABORT={ids[2]},HANG={ids[4]}"
    flags = ("--modality", "text", "--limit", "6", "--max-output-tokens", "8", "--sample-timeout", "3")
    p, run_dir = run_here(*flags, faulty=True, env={"EDGEFARM_TEST_FAULTS": faults})
    assert p.returncode == 0, p.stderr
    by_id = {r["id"]: r for r in results(run_dir)}
    assert list(by_id) == ids  # job order, every sample exactly once
    assert by_id[ids[1]]["status"] == "killed" and by_id[ids[1]]["signal"] == 9  # no memory evidence: not oom
    assert by_id[ids[2]]["status"] == "crash" and by_id[ids[2]]["signal"] == 6
    assert by_id[ids[4]]["status"] == "timeout" and "3 s" in by_id[ids[4]]["error"]
    for i in (0, 3, 5):
        assert by_id[ids[i]]["status"] == "ok"
    scored = device_json(run_dir, "results.json")
    assert scored[ids[1]] == "" and scored[ids[0]] == by_id[ids[0]]["output"]
    report = device_json(run_dir, "report.json")
    assert report["summary"]["total_scored"] == 6  # failed samples count as failures, not skips
    notes = device_json(run_dir, "outcome.json")["notes"]
    assert sum("restarted" in n for n in notes) == 2


def test_resume_runs_only_what_is_missing(tmp_path, run_here):
    args = ("--modality", "text", "--limit", "5", "--max-output-tokens", "8")
    first, run_dir = run_here(*args)
    assert first.returncode == 0
    device_results = next((tmp_path / "work" / "runs").iterdir()) / "this-host" / "job" / "results.jsonl"
    lines = device_results.read_text().splitlines()
    device_results.write_text("\n".join(lines[:3]) + "\n")  # as if the device stopped after 3 samples
    p, _ = run_here(*args, "--resume", str(run_dir))
    assert p.returncode == 0, p.stderr
    outcome = device_json(run_dir, "outcome.json")
    assert any("2 sample(s) to run" in n for n in outcome["notes"]), outcome["notes"]
    assert len(results(run_dir)) == 5


def test_resume_refuses_a_different_selection(run_here):
    base = ("--modality", "text", "--max-output-tokens", "4")
    first, run_dir = run_here(*base, "--limit", "1")
    assert first.returncode == 0
    p, _ = run_here(*base, "--limit", "2", "--resume", str(run_dir))
    assert p.returncode == 2 and "differs" in p.stderr


def test_cooldown_waits_for_a_hot_board_and_records_the_wait(run_here):
    """The command line's settings reach the Python runner through the job's settings file: the gate, and
    the threads and sample timeout its READY line says it gave the runtime."""
    flags = ("--modality", "text", "--limit", "3", "--max-output-tokens", "4", "--cooldown-c", "40",
             "--threads", "2", "--sample-timeout", "45.5")  # fmt: skip
    p, run_dir = run_here(*flags, faulty=True, env={"EDGEFARM_TEST_THERMAL": "43,2"})
    assert p.returncode == 0, p.stderr
    applied = device_json(run_dir, "outcome.json")["runner"]["applied_settings"]
    assert applied == {"backend": "cpu", "threads": 2, "max_num_tokens": 0, "sample_timeout_ms": 45_500}
    rows = results(run_dir)
    assert 1.0 <= rows[0]["cooldown_s"] <= 3.0  # 43 C -> 40 C at 2 C/s
    assert all(r["cooldown_s"] == 0.0 for r in rows[1:])  # already cool
    assert rows[0]["thermal_before"]["max_temp_c"] <= 40.0
    assert run_json(run_dir, "run.json")["flags"]["cooldown_c"] == 40


def test_cooldown_without_a_sensor_says_so(run_here):
    flags = ("--modality", "text", "--limit", "2", "--max-output-tokens", "4", "--cooldown-c", "40")
    p, run_dir = run_here(*flags, faulty=True, env={"EDGEFARM_TEST_THERMAL": "none"})
    assert p.returncode == 0, p.stderr
    assert "no thermal sensor is readable" in p.stderr  # said once, not silently skipped
    assert p.stderr.count("no thermal sensor") == 1
    assert [r["cooldown_s"] for r in results(run_dir)] == [None, None]
