"""Runs into the results database: at the end of `edgefarm run` and `edgefarm bench` from their records
in memory (RunRecord, BenchRecord), and `edgefarm history import` from run folders (the only reader of
folders here, through the run's own decoders).

A run never fails because of the database: `record_at_end` says what went wrong and where the run's
record is (its folder), and a later `edgefarm history import RUN_DIR` catches up.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from ..bench.rows import LlamaRow
from ..devices.types import DeviceInfo
from ..devices.units import split_unit
from ..devices_yaml import name_problem
from ..errors import ConfigError, EdgefarmError
from ..farm.run_json import RunJson
from ..farm.rundir import device_folder, read_outcome, read_run_json
from ..jsonio import DOCUMENT, read_json
from ..redact import redact
from ..report.build import load_report
from .bench import bench_entry, bench_record_entry
from .db import Database, opened, resolve
from .entry import device_identities, run_entry
from .judge import CHANGE, OUTLIER
from .regress import changes
from .series import DEFAULT_WINDOW, judge_series
from .store import Filters, excluded, read_history, write_run
from .types import Change, RunEntry, figure_spec

if TYPE_CHECKING:
    from ..bench.record import BenchRecord
    from ..run.types import RunRecord

MAX_IMPORT_FOLDERS = 100_000


def run_record_entry(run: RunRecord) -> RunEntry:
    """A finished `edgefarm run` in memory (run/types.py RunRecord: its report and its devices' outcomes):
    no file of its folder read back."""
    identities = {o.name: dict(o.runner) if o.runner else {} for o in run.outcomes}
    return run_entry(
        run.report, str(Path(run.run_dir).resolve()), device_identities(run.report.run, identities)
    )


def folder_entry(run_dir: Path) -> RunEntry:
    """A run (or bench) folder's record, for `history import` and `compare --baseline last`: read through
    the run's own decoders (run.json's RunJson, the report builder, outcome.json's DeviceOutcome), every
    device name checked as the inventory checks it."""
    run = RunJson.from_dict(read_run_json(run_dir))
    where = str(Path(run_dir) / "run.json")
    for name in run.devices:
        if problem := name_problem(split_unit(name)[0]):  # a matrix run's unit: its device's name @ backend
            raise ConfigError(f"devices: {problem}", where=where,
                              fix="a damaged or hand-edited run folder: restore its run.json, or leave the folder out")  # fmt: skip
    if run.kind == "bench":
        return _bench_entry_of(run_dir, run)
    report = load_report(run_dir)
    identities = {}
    for row in report.devices:
        outcome = read_outcome(
            run_dir / "devices" / row.folder if row.folder else device_folder(run_dir, row.device)
        )
        identities[row.device] = dict(outcome.runner) if outcome and outcome.runner else {}
    return run_entry(report, str(Path(run_dir).resolve()), device_identities(report.run, identities))


def _bench_entry_of(run_dir: Path, record: RunJson) -> RunEntry:
    path = run_dir / "bench.json"
    if not path.is_file():
        raise ConfigError("a bench folder without bench.json (the bench did not finish)", where=str(run_dir),
                          fix=f"finish it: edgefarm bench --resume {run_dir}")  # fmt: skip
    bench = read_json(
        path, DOCUMENT, error=ConfigError, fix=f"finish the bench again: edgefarm bench --resume {run_dir}"
    )
    devices = {}
    for name in record.devices:
        info = device_folder(run_dir, name) / "device.json"
        data = read_json(info, DOCUMENT, error=ConfigError, fix="") if info.is_file() else {}
        devices[name] = DeviceInfo.from_dict({"name": name, **(data if isinstance(data, Mapping) else {})})
    rows = bench.get("rows") if isinstance(bench, Mapping) else None
    rows = tuple(LlamaRow.from_dict(r) for r in rows if isinstance(r, Mapping)) if isinstance(rows, list) else ()
    return bench_entry(record, rows, devices, str(Path(run_dir).resolve()))


def changes_of(db: Database, entry: RunEntry, window: int = DEFAULT_WINDOW) -> tuple[list[Change], list[str]]:
    """Each device of `entry` judged against its comparable runs recorded before it (history/judge.py):
    the changes at this run, and what this run settles about the run before it (a change it confirms,
    or an outlier it comes back from)."""
    rows = read_history(db, Filters(devices=tuple(d.device for d in entry.devices)))
    why = excluded(db)
    found: list[Change] = []
    settled: list[str] = []
    for d in entry.devices:
        points = [r.point for r in rows if r.device == d.device and r.config_key == d.config_key]
        at = next((i for i, p in enumerate(points) if p.run_id == entry.run_id), None)
        if at is None:
            continue
        points = points[: at + 1]
        judged = judge_series(d.device, points, window, why)
        found += [c for c in changes(d.device, points, judged) if c.run_id == entry.run_id]
        for figure, js in judged.items():
            before = js[at - 1] if at else None
            label = figure_spec(figure).column.label
            if before is not None and before.state == OUTLIER:
                settled.append(f"{d.device}: {label} of {before.run_id} was an outlier: this run is back in "
                               "the usual spread")  # fmt: skip
            elif before is not None and before.state == CHANGE and before.confirmed:
                settled.append(
                    f"{d.device}: the change of {label} at {before.run_id} is confirmed by this run"
                )
    return found, settled


def last_comparable_run(db: Database, run_dir: Path) -> Path:
    """The folder of the latest run recorded before `run_dir`'s run that shares a device and its
    configuration with it (the most such devices first); `compare --baseline last`."""
    entry = folder_entry(run_dir)
    keys = {(d.device, d.config_key) for d in entry.devices}
    me = (entry.started_at, entry.finished_at, entry.run_id)
    shared: dict[str, int] = {}
    order: dict[str, tuple[str, str, str]] = {}
    folders: dict[str, str] = {}
    for r in read_history(db, Filters(devices=tuple(sorted({d for d, _ in keys})))):
        p = r.point
        when = (p.started_at, p.finished_at, p.run_id)
        if (r.device, r.config_key) in keys and p.run_id != entry.run_id and when < me:
            shared[p.run_id] = shared.get(p.run_id, 0) + 1
            order[p.run_id], folders[p.run_id] = when, p.folder
    if not shared:
        raise ConfigError(
            f"no run of the same model, dataset slice, settings and devices before {entry.run_id} in the results "
            "database",
            where=db.where,
            fix="import the earlier runs (`edgefarm history import runs/`), or name both runs: "
            "edgefarm compare RUN_A RUN_B",
        )
    best = max(shared, key=lambda run_id: (shared[run_id], order[run_id]))
    folder = Path(folders[best])
    if not (folder / "run.json").is_file():
        raise ConfigError(f"the last comparable run {best} is recorded at {folder}, which is gone", where=db.where,
                          fix="restore that run folder, or name both runs: edgefarm compare RUN_A RUN_B")  # fmt: skip
    return folder


@dataclass(frozen=True)
class Recorded:
    run_id: str
    status: str  # recorded | replaced | unchanged
    changes: tuple[Change, ...] = ()
    settled: tuple[str, ...] = ()  # what this run tells of the run before it (changes_of)


def record(db: Database, entry: RunEntry) -> Recorded:
    """The run's record into the database, then judged against the comparable runs before it."""
    status = write_run(db, entry)
    found, settled = changes_of(db, entry)
    return Recorded(entry.run_id, status, tuple(found), tuple(settled))


def record_at_end(target: str, entry: RunEntry) -> tuple[Recorded | None, str]:
    """(what was recorded, '') or (None, why not): never raises an edgefarm error."""
    try:
        with opened(target) as db:
            return record(db, entry), ""
    except EdgefarmError as e:
        return None, str(e)


def remember(
    db: str | None, console: Console, *, run: RunRecord | None = None, bench: BenchRecord | None = None
) -> None:
    """The end of `edgefarm run` (its RunRecord) or `bench` (its BenchRecord): the record in memory into
    the results database, its changes against the comparable runs before it on stderr; a database that
    cannot be reached (or a write that waited past its lock timeout) is said with the import that adds
    the run later, never a failed run (`--db none`: nothing recorded)."""
    if db == "none":
        return
    if (run is None) == (bench is None):
        raise ValueError("remember takes a run's record or a bench's")  # a programming error
    entry = run_record_entry(run) if run is not None else bench_record_entry(bench)  # type: ignore[arg-type]
    run_dir = Path(entry.folder)
    try:
        target = resolve(db)
    except EdgefarmError as e:
        recorded, why = None, str(e)
    else:
        recorded, why = record_at_end(target, entry)
    if recorded is None:
        console.print(f"[yellow]history: this run is not in the results database:[/] {why}\n"
                      f"  the run folder {run_dir} is its record; `edgefarm history import {run_dir}"
                      f"{'' if db is None else ' --db ' + redact(db)}` adds it later", highlight=False)  # fmt: skip
        return
    console.print(f"history: {recorded.status} in {redact(target)}", highlight=False)
    for change in recorded.changes:
        console.print(f"[bold]history: change:[/] {change.text()}", highlight=False)
    for note in recorded.settled:
        console.print(f"history: {note}", highlight=False)


def run_folders(paths: Sequence[Path]) -> Iterator[Path]:
    """Each path that is a run folder (has run.json), else its sub-folders that are, in name order."""
    count = 0
    for path in paths:
        if (path / "run.json").is_file():
            found = [path]
        elif path.is_dir():
            found = sorted(p for p in path.iterdir() if (p / "run.json").is_file())
        else:
            raise ConfigError(
                f"{path} is not a folder", where=str(path), fix="pass run folders or the runs/ folder"
            )
        for p in found:
            count += 1
            if count > MAX_IMPORT_FOLDERS:
                raise ConfigError(f"more than {MAX_IMPORT_FOLDERS} run folders", where=str(path),
                                  fix="import the folders in parts")  # fmt: skip
            yield p
