"""Stage 3 of `edgefarm run`: the end of run.json, the combined reports (report.json, .md, .html),
the tables on the terminal, and the exit status the outcomes earn."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import replace

import click
from rich.console import Console

from ..errors import BackendUnavailable, DeviceError, ModelError, OutputError
from ..farm.rundir import device_folder, utc_now, versions, write_run_json
from ..farm.session import finished_ids
from ..farm.types import DeviceOutcome
from ..interrupt import INTERRUPTED_EXIT
from ..measure import Tally
from ..report.build import load_report, write_reports
from ..report.terminal import print_tables
from ..runners.stamp import device_versions
from ..scoring.evalscope_table import render_table
from .types import Execution, RunPlan, RunRecord


def finish(plan: RunPlan, ex: Execution, console: Console, stop: threading.Event) -> RunRecord:
    """Write the run's end and its reports, print them; the RunRecord holds the exit status."""
    record = replace(
        ex.record,
        finished_at=utc_now().isoformat(timespec="seconds"),
        versions=versions(),
        device_versions=device_versions({o.name: o.runner for o in ex.outcomes}),  # runners/stamp.py
    )
    write_run_json(ex.run_dir, record)
    report = load_report(ex.run_dir, record, ex.settled)
    paths = write_reports(ex.run_dir, report, dataset=plan.dataset)
    ran = any(r.samples for r in report.devices)
    print_outcomes(ex.outcomes, report if ran else None, plan.model.path.name, console)
    interrupted = stop.is_set()
    covered = {s.phone for s in ex.stood_in if s.completed}  # a stand-in finished what the phone could not
    code = INTERRUPTED_EXIT if interrupted else exit_status(ex.outcomes, covered)
    if not ran and not interrupted:  # no table, no baseline, no paired verdict: there is nothing to compare
        console.print(f"[red]no device ran[/]: {len(plan.unusable)} not used, {len(ex.outcomes)} failed "
                      "(why: above); nothing to compare. `edgefarm doctor` checks every device before a run",
                      highlight=False)  # fmt: skip
        code = code or DeviceError.exit_code
    return RunRecord(
        run_id=ex.run_id,
        run_dir=ex.run_dir,
        report=report,
        paths=paths,
        outcomes=ex.outcomes,
        interrupted=interrupted,
        exit_code=code,
    )


def exit_status(outcomes: Sequence[DeviceOutcome], covered: set[str] = frozenset()) -> int:
    """0 when every device ran (or a stand-in finished for it); else the failure's own code: the
    output folder's (fix the disk, then --resume) wins, then the model's when it failed on every
    device, then a device's own code (a backend that is not there keeps its code), else a device error. Only backends a device does not have (some cells of a matrix run): BackendUnavailable's."""
    failed = [o for o in outcomes if o.error and o.name not in covered]
    if not failed:
        return 0
    codes = {o.error_code for o in failed}
    if codes == {BackendUnavailable.exit_code}:  # only backends a device does not have: some matrix cells
        return BackendUnavailable.exit_code  # did not run (docs/matrix.md), the others are in the report
    if OutputError.exit_code in codes:
        return OutputError.exit_code
    if len(failed) == len(outcomes) and codes == {ModelError.exit_code}:
        return ModelError.exit_code
    own = codes - {0, ModelError.exit_code, DeviceError.exit_code, 1}
    if len(own) == 1 and len(failed) == len(outcomes):
        return own.pop()
    return DeviceError.exit_code


def print_outcomes(outcomes: Sequence[DeviceOutcome], report, model_name: str, console: Console) -> None:
    """The comparison tables on stdout (and evalscope's table per device; none when `report` is None: no
    device ran); warnings and failures on stderr."""
    if report is not None:
        print_tables(report)
    for o in outcomes:
        if o.report and o.report.get("metrics"):  # evalscope formats: evalscope's own table per device
            click.echo(f"\n{o.name}:\n" + render_table(model_name, o.report))
    for o in outcomes:
        for note in o.notes:
            if note.startswith("warning:"):
                console.print(f"[yellow]{o.name}:[/] {note}")
        if o.error:
            console.print(f"[red]{o.name} failed:[/] {o.error}")


def interrupted_note(plan: RunPlan, record: RunRecord) -> str:
    """What an interrupted run kept and what `--resume` will finish, in the unit it counts (runs when a
    sample runs more than once), read from the device folders as the resume will read them."""
    share = plan.shards.assignment if plan.shards is not None else {}
    repeat, sustain = plan.request.repeat, plan.request.sustain
    tallies = [Tally.of(share.get(o.name, plan.samples), repeat, sustain,
                        finished_ids(device_folder(record.run_dir, o.name))) for o in record.outcomes]  # fmt: skip
    total = Tally(sum(t.samples for t in tallies), repeat * sustain, sum(t.done for t in tallies),
                  sum(t.complete for t in tallies), sum(t.warmups for t in tallies))  # fmt: skip
    devices = f" on {len(tallies)} devices" if len(tallies) > 1 else ""
    return (
        f"interrupted: {total.text()}{devices} finished and are kept; continue with: "
        f"edgefarm run --resume {record.run_dir} (it runs the {total.left:,} {total.unit} left, with the "
        "flags this run recorded)"
    )
