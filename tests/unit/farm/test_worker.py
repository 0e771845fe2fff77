"""The one device worker (orchestrator/farm/worker.py) every farm and the stand-ins run a device
through: a device another live run holds is refused before anything runs, naming that run; a folder
that cannot be made or a bug is the outcome, never raised; --resume's earlier figures are added.
Real devices of this host and their real lock (conftest.py)."""

from __future__ import annotations

import threading
from pathlib import Path

from orchestrator.devices.lock import DeviceBusy, held
from orchestrator.errors import OutputError
from orchestrator.farm.types import Phase
from orchestrator.farm.worker import run_job
from orchestrator.scoring import RunScoring


def _job(two_hosts, tmp_path: Path, **request):
    plan, _, jobs = two_hosts(tmp_path, limit=1, **request)
    return plan.devices[0], jobs["h1"], RunScoring(plan.score)


def test_a_device_another_live_run_holds_is_refused_naming_that_run_and_runs_nothing(
    tmp_path: Path, two_hosts
):
    device, job, score = _job(two_hosts, tmp_path)
    progress = job.progress()
    with held(device, "20260101-000000-busy"):  # another run of this host holds h1
        outcome = run_job(device, job, job.folder, progress, score=score, stop=threading.Event())
    assert outcome.error_code == DeviceBusy.exit_code and "20260101-000000-busy" in outcome.error
    assert outcome.results == [] and progress.phase is Phase.FAILED
    assert not (job.folder / "results.jsonl").exists()


def test_a_folder_that_cannot_be_made_is_the_outcome_not_an_exception(tmp_path: Path, two_hosts):
    device, job, score = _job(two_hosts, tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    outcome = run_job(device, job, blocker / "h1", job.progress(), score=score, stop=threading.Event())
    assert (
        outcome.name == "h1"
        and outcome.error_code == OutputError.exit_code
        and str(blocker / "h1") in outcome.error
    )


def test_a_resumed_sessions_figures_are_added_to_the_earlier_ones(sharded_run):
    earlier = sharded_run.earlier
    h1 = next(o for o in sharded_run.outcomes if o.name == "h1")
    h2 = next(o for o in sharded_run.outcomes if o.name == "h2")
    assert h2.sessions == 1 and h2.model_loads == 1  # no earlier session: its own figures
    assert h1.sessions == earlier.sessions + 1 and h1.model_loads == earlier.model_loads + 1
    assert h1.wall_s > earlier.wall_s
