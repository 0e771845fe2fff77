"""Two devices of this host (`kind: local`, each its own work folder) planned by the run's own stage
(read_inputs + plan, --shard --limit 3: an identical pair that splits three samples) and run ONCE per
module by the real LocalFarm with the real Python runner, the bundled tiny model and dataset: the farm
layer's tests read what that run left (about 3 s)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from rich.console import Console

from orchestrator.bundled import BUNDLED_DATASET, BUNDLED_MODEL
from orchestrator.farm.local import LocalFarm
from orchestrator.farm.rundir import device_folder, new_run_dir
from orchestrator.farm.session import DeviceJob
from orchestrator.farm.types import DeviceOutcome
from orchestrator.run.plan import plan, read_inputs
from orchestrator.run.types import RunPlan, RunRequest
from orchestrator.scoring import RunScoring

EARLIER = DeviceOutcome(name="h1", kind="local", model_loads=2, wall_s=100.0, sessions=1)  # a --resume's


@dataclass(frozen=True)
class FarmRun:
    plan: RunPlan
    run_dir: Path
    jobs: dict[str, DeviceJob]
    outcomes: list[DeviceOutcome]
    score: RunScoring
    earlier: DeviceOutcome  # what h1's job carried: a --resume's earlier sessions


def _two_hosts(folder: Path, **request) -> tuple[RunPlan, Path, dict[str, DeviceJob]]:
    """The plan of a run on two devices of this host, its new run folder, and each device's job."""
    folder.mkdir(parents=True, exist_ok=True)
    inventory = folder / "devices.yaml"
    inventory.write_text(
        "devices:\n"
        + "".join(
            f"  - name: {n}\n    kind: local\n    workdir: {folder / ('work-' + n)}\n" for n in ("h1", "h2")
        )
    )
    req = RunRequest(device_spec="h1,h2", inventory=inventory, out=folder / "runs", model=BUNDLED_MODEL,
                     dataset_spec=str(BUNDLED_DATASET), **({"limit": 3} | request))  # fmt: skip
    p = plan(req, read_inputs(req))
    run_id, run_dir, _ = new_run_dir(req.out)
    share = p.shards.assignment if p.shards else {}
    jobs = {
        d.name: DeviceJob(d.name, p.dataset, tuple(share.get(d.name, p.samples)), p.model,
                          replace(p.options[d.name], run_id=run_id), p.job, device_folder(run_dir, d.name))
        for d in p.devices
    }  # fmt: skip
    return p, run_dir, jobs


@pytest.fixture
def two_hosts() -> Callable[..., tuple[RunPlan, Path, dict[str, DeviceJob]]]:
    """`two_hosts(folder, **RunRequest fields)`: the plan, run folder and jobs of a run on h1 and h2."""
    return _two_hosts


@pytest.fixture(scope="module")
def sharded_run(tmp_path_factory: pytest.TempPathFactory) -> FarmRun:
    """h1 (carrying a resumed session's figures) and h2 in one lane, as the plan puts this host's devices."""
    p, run_dir, jobs = _two_hosts(tmp_path_factory.mktemp("farm"), shard=True)
    jobs["h1"] = replace(jobs["h1"], earlier=EARLIER)
    score = RunScoring(p.score)
    outcomes = LocalFarm(p.lanes).run(p.devices, jobs, Console(quiet=True), score, threading.Event())
    return FarmRun(p, run_dir, jobs, outcomes, score, EARLIER)
