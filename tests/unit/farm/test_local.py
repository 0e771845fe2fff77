"""The farm of this controller (orchestrator/farm/local.py): every lane at once, a lane's devices one
after another, each device's folder ending with its outcome.json; a Ctrl-C before a device's turn
starts nothing; a bug in one device's session is that device's outcome, and the lane goes on.
Real devices of this host running the real runner (conftest.py)."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from orchestrator.farm.local import LocalFarm, job_unit
from orchestrator.farm.rundir import read_outcome
from orchestrator.scoring import RunScoring


def test_a_lane_runs_its_devices_one_after_another_and_each_folder_ends_with_its_outcome(sharded_run):
    run = sharded_run
    assert run.plan.lanes == (("h1", "h2"),)  # this host's devices share its CPU: one lane
    assert [o.name for o in run.outcomes] == ["h1", "h2"]  # in `devices` order
    for o in run.outcomes:
        job = run.jobs[o.name]
        assert not o.error and [r.id for r in o.results] == [s.id for s in job.samples]
        assert all(r.status == "ok" and r.output for r in o.results)
        assert read_outcome(job.folder).to_dict() == o.to_dict()  # outcome.json, written by the farm
    h1, h2 = run.jobs["h1"].folder, run.jobs["h2"].folder
    # h2's session began (its device.json) only after h1's ended (its outcome.json)
    assert (h2 / "device.json").stat().st_mtime_ns >= (h1 / "outcome.json").stat().st_mtime_ns


def test_a_stop_before_the_devices_turn_starts_nothing_and_writes_nothing(tmp_path: Path, two_hosts):
    plan, run_dir, jobs = two_hosts(tmp_path)
    stop = threading.Event()
    stop.set()  # Ctrl-C before the farm started
    outcomes = LocalFarm(plan.lanes).run(
        plan.devices, jobs, Console(quiet=True), RunScoring(plan.score), stop
    )
    assert [(o.name, o.interrupted, o.results, o.error) for o in outcomes] == [
        ("h1", True, [], ""),
        ("h2", True, [], ""),
    ]
    assert not (run_dir / "devices").exists()


def test_a_bug_in_one_devices_session_is_its_outcome_and_its_lane_goes_on(tmp_path: Path, two_hosts):
    plan, _, jobs = two_hosts(tmp_path, limit=1)
    jobs["h1"] = replace(jobs["h1"], dataset=None)  # a bug: the session cannot read its dataset
    outcomes = LocalFarm(plan.lanes).run(
        plan.devices, jobs, Console(quiet=True), RunScoring(plan.score), threading.Event()
    )
    h1, h2 = outcomes
    assert h1.error.startswith("internal error: ") and "Traceback" in h1.error and h1.error_code == 1
    assert read_outcome(jobs["h1"].folder).error == h1.error  # said in its folder too
    assert not h2.error and [r.status for r in h2.results] == ["ok"]


def test_progress_counts_runs_when_a_sample_runs_more_than_once(tmp_path: Path, two_hosts):
    _, _, jobs = two_hosts(tmp_path, limit=2, repeat=3)
    assert job_unit(jobs["h1"]) == "runs" and jobs["h1"].runs == 6
    _, _, jobs = two_hosts(tmp_path / "once", limit=2)
    assert job_unit(jobs["h1"]) == "samples" and jobs["h1"].runs == 2
