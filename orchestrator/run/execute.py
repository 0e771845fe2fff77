"""Stage 2 of `edgefarm run`: the plan on the devices. The run folder and run.json, the farm (every
device's session), the shards merged, the stand-in boards. Everything the run does to devices and
files happens here; a device's failure is its outcome, never an exception past this stage."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from ..devices.units import split_unit
from ..farm.conditions import measured
from ..farm.fallback import run_stand_ins, stood_in_devices
from ..farm.local import Farm, LocalFarm
from ..farm.rundir import device_folder, host_info, new_run_dir, read_outcome, write_run_json
from ..farm.session import DeviceJob, finished_ids
from ..farm.shard_merge import merge_shards
from ..farm.types import StandIns
from ..measure import WARMUP_MARK, Tally
from ..scoring import RunScoring
from .types import Execution, RunPlan


def execute(plan: RunPlan, console: Console, stop: threading.Event) -> Execution:
    """Run the plan; `stop` (Ctrl-C) makes every session stop its runner and keep what finished."""
    _announce(plan, console)
    if plan.previous is not None:
        run_id, run_dir, started = plan.previous.run_id, plan.previous.run_dir, plan.previous.started_at
    else:
        run_id, run_dir, started = new_run_dir(plan.request.out)
    record = plan.run_json(run_id, started, host_info())
    write_run_json(run_dir, record)
    passes, n = plan.request.repeat * plan.request.sustain, len(plan.samples)  # the unit the progress counts
    what = f"{n} samples x {passes} runs = {n * passes:,} runs per device" if passes > 1 else f"{n} samples"
    console.print(f"run {run_id}: {what}, {units_text(plan.devices)} -> {run_dir}")
    if plan.host_sharing is not None:
        how = (
            "one after another"
            if plan.host_sharing.mode == "sequential"
            else "at the same time (--parallel-local)"
        )
        console.print(f"note: {', '.join(plan.host_sharing.devices)} share this host's CPU: they run {how}")
    score = RunScoring(plan.score)  # this run's: an answer several devices give is scored once
    farm: Farm = plan.cluster or LocalFarm(plan.lanes)  # the cluster's runs each job on its farm host
    jobs = device_jobs(plan, run_id, run_dir)
    if plan.previous is not None:  # what the resume finishes, in the unit each device counts
        for name, job in jobs.items():
            console.print(resume_line(name, job), highlight=False)
    earlier = plan.previous.record.conditions if plan.previous is not None else None
    outcomes, conditions = measured(farm, plan.devices, jobs, console, score, stop, run_id, earlier)
    settled = {o.name: replace(o, results=list(o.results)) for o in outcomes if not o.error}
    if plan.shards is not None:
        merge_shards(plan.shards, outcomes, plan.dataset, plan.samples, run_dir, score)
    stood_in = []
    # a backend matrix has no stand-ins: a board's CPU would answer for a phone's gpu or npu (docs/matrix.md)
    if not stop.is_set() and not any(split_unit(d.name)[1] for d in plan.devices):
        request = plan.request
        cluster = plan.cluster  # its boards stand in on their farm hosts
        stand_ins = StandIns(
            inventory=plan.inventory, table=plan.stand_ins,
            selected=(*plan.devices, *cluster.boards.values()) if cluster else plan.devices,
            unusable=plan.unusable if request.device_spec == "all" else plan.absent, dataset=plan.dataset,
            samples=plan.samples, model=plan.model, job_opts=plan.job, options_for=plan.options_for, score=score,
            run_id=run_id, run_dir=run_dir, wait_s=request.fallback_wait_s,
        )  # fmt: skip
        stood_in = run_stand_ins(stand_ins, outcomes, farm=farm, console=console, stop=stop)
    if stood_in:  # the phones they stood in for, and boards that ran only as stand-ins, get rows
        record = replace(record, devices=tuple(dict.fromkeys((*record.devices, *stood_in_devices(stood_in)))),
                         stand_ins=tuple(stood_in))  # fmt: skip
    if plan.cluster:  # what crossed the network to each farm host (for the run and its stand-ins)
        record = replace(record, cluster=plan.cluster.record())
        for note in plan.cluster.end():  # a head gone during the run is said
            console.print(f"[yellow]note:[/] {escape(note)}", highlight=False)
            record = record.with_note(note)
    record = replace(record, conditions=conditions)  # this host's load, each device's start (farm/conditions.py)
    if stood_in:  # rundir.write_run_json, the one writer of run.json (here its start, finish.py its end)
        write_run_json(run_dir, record)
    return Execution(run_id, run_dir, record, tuple(outcomes), tuple(stood_in), settled)


def units_text(devices) -> str:
    """`3 device(s)`, or for a backend matrix `3 device(s) x backends = 6 units (docs/matrix.md)`."""
    phones = {split_unit(d.name)[0] for d in devices}
    if len(phones) == len(devices):
        return f"{len(devices)} device(s)"
    return f"{len(phones)} device(s) x backends = {len(devices)} units (docs/matrix.md)"


def device_jobs(plan: RunPlan, run_id: str, run_dir: Path) -> dict[str, DeviceJob]:
    """Every device's job: its share of the samples (--shard), its options, its folder, and the
    figures of the run's earlier sessions there (--resume)."""
    share = plan.shards.assignment if plan.shards else {}
    jobs = {}
    for d in plan.devices:
        folder = device_folder(run_dir, d.name)
        jobs[d.name] = DeviceJob(d.name, plan.dataset, tuple(share.get(d.name, plan.samples)), plan.model,
                                 replace(plan.options[d.name], run_id=run_id), plan.job, folder,
                                 earlier=read_outcome(folder),
                                 finished=finished_ids(folder) if plan.previous else frozenset())  # fmt: skip
    return jobs


def resume_line(name: str, job: DeviceJob) -> str:
    """`this-host: 592 of 1,200 runs (...) finished; this session runs the 608 left, after 2 warm-up runs`."""
    tally = Tally.of(job.samples, job.opts.repeat, job.opts.sustain, job.finished)
    if not tally.left:
        return f"{name}: {tally.text()} finished; nothing left to run"
    warm = sum(1 for s in job.items if WARMUP_MARK in s.id and s.id not in job.finished)
    return (f"{name}: {tally.text()} finished; this session runs the {tally.left:,} {tally.unit} left"
            + (f", after {warm} warm-up run(s) (not counted)" if warm else ""))  # fmt: skip


def _announce(plan: RunPlan, console: Console) -> None:
    for note in plan.notes:
        console.print(f"[yellow]note:[/] {note}")
    for u in plan.unusable:
        console.print(f"[yellow]not used:[/] {u.name} ({u.state}): {u.problem}")
    for sample_id, why in plan.refused.items():
        console.print(f"[yellow]not sent:[/] {escape(sample_id)}: {escape(why)}", highlight=False)
