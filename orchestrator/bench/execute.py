"""Stage 2 of `edgefarm bench`, as `edgefarm run`'s execute: the run folder and its run.json record,
then every device's cells through the run's farm (this controller's farm.LocalFarm or, with
`--cluster`, the Ray cluster's ClusterFarm: the same DeviceJobs either way; sessions, device locks,
progress, Ctrl-C). No scoring: the rows are the figures. A device's failure is its outcome."""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from ..farm.conditions import measured
from ..farm.local import Farm, LocalFarm
from ..farm.run_json import RunJson
from ..farm.rundir import device_folder, host_info, new_run_dir, read_outcome, write_run_json
from ..farm.session import DeviceJob, finished_ids
from ..farm.types import DeviceOutcome
from ..jobs import JobOptions
from .plan import BenchPlan


@dataclass(frozen=True)
class BenchExecution:
    run_id: str
    run_dir: Path
    record: RunJson  # run.json as it stands after the devices (finish.py adds the end)
    outcomes: tuple[DeviceOutcome, ...]  # each device's rows and repeats in memory (finish.py's figures)


def execute_bench(plan: BenchPlan, console: Console, stop: threading.Event) -> BenchExecution:
    """The cells on every device through the run's farm (sessions, device locks, progress, Ctrl-C)."""
    for u in plan.unusable:
        console.print(f"[yellow]not used:[/] {u.name} ({u.state}): {u.problem}")
    if plan.previous is not None:
        run_id, run_dir, started = plan.previous.run_id, plan.previous.run_dir, plan.previous.started_at
    else:
        run_id, run_dir, started = new_run_dir(plan.request.out)
    record = plan.run_json(run_id, started, host_info())
    write_run_json(run_dir, record)  # rundir's one writer of run.json (here its start, finish.py its end)
    n = sum(len(g) for g in plan.grid.values())
    console.print(
        f"bench {run_id}: {n} cell(s) x {plan.request.repetitions} on {len(plan.devices)} device(s) -> {run_dir}"
    )
    jobs = {}
    for d in plan.devices:  # each device's cells, as a run's DeviceJob (its own share of "samples")
        folder = device_folder(run_dir, d.name)
        jobs[d.name] = DeviceJob(d.name, plan.dataset, tuple(c.sample() for c in plan.grid[d.name]), plan.model,
                                 replace(plan.options[d.name], run_id=run_id), JobOptions(), folder,
                                 earlier=read_outcome(folder),  # the run's resume: what earlier sessions ran
                                 finished=finished_ids(folder) if plan.previous else frozenset())  # fmt: skip
    farm: Farm = plan.cluster or LocalFarm(plan.lanes)  # the cluster's runs each job on its farm host
    earlier = plan.previous.record.conditions if plan.previous is not None else None  # --resume
    outcomes, conditions = measured(farm, plan.devices, jobs, console, None, stop, run_id, earlier)  # no scoring
    record = replace(record, conditions=conditions)  # this host's load, each device's start (farm/conditions.py)
    if plan.cluster:  # what crossed the network to each farm host; a head gone during the bench is said
        record = replace(record, cluster=plan.cluster.record())
        for note in plan.cluster.end():
            console.print(f"[yellow]note:[/] {escape(note)}", highlight=False)
            record = record.with_note(note)
    return BenchExecution(run_id, run_dir, record, tuple(outcomes))


__all__ = ["BenchExecution", "execute_bench"]
