"""Runs into the results database: at the end of `edgefarm run`, and `edgefarm history import`.

A run never fails because of the database: `record_at_end` says what went wrong and where the run's
record is (its folder), and a later `edgefarm history import runs/` catches up.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError, EdgefarmError
from ..report.build import load_report
from ..report.types import RunReport
from ..rundir import device_folder, read_outcome
from .db import Database, opened
from .entry import device_identities, run_entry
from .regress import changes
from .store import Filters, read_history, read_samples, write_run
from .types import Change, RunEntry

MAX_IMPORT_FOLDERS = 100_000


def entry_of(run_dir: Path, report: RunReport | None = None) -> RunEntry:
    """A run folder's record (its report rebuilt from the folder unless given)."""
    report = report or load_report(run_dir)
    outcomes = {}
    for row in report.devices:
        outcome = read_outcome(
            run_dir / "devices" / row.folder if row.folder else device_folder(run_dir, row.device)
        )
        outcomes[row.device] = dict(outcome.runner) if outcome and outcome.runner else {}
    return run_entry(report, str(Path(run_dir).resolve()), device_identities(report.run, outcomes))


def changes_of(db: Database, entry: RunEntry) -> list[Change]:
    """Each device of `entry` against its last comparable run recorded before it."""
    rows = read_history(db, Filters(devices=tuple(d.device for d in entry.devices)))
    found: list[Change] = []
    for d in entry.devices:
        series = [r for r in rows if r.device == d.device and r.config_key == d.config_key]
        at = next((i for i, r in enumerate(series) if r.point.run_id == entry.run_id), None)
        if not at:  # not recorded, or the first of its configuration
            continue
        previous, current = series[at - 1].point, series[at].point
        found += changes(d.device, previous, current, read_samples(db, previous.run_id, d.device), d.samples)
    return found


@dataclass(frozen=True)
class Recorded:
    run_id: str
    status: str  # recorded | replaced | unchanged
    changes: tuple[Change, ...] = ()


def record(db: Database, run_dir: Path, report: RunReport | None = None) -> Recorded:
    entry = entry_of(run_dir, report)
    status = write_run(db, entry)
    return Recorded(entry.run_id, status, tuple(changes_of(db, entry)))


def record_at_end(target: str, run_dir: Path, report: RunReport) -> tuple[Recorded | None, str]:
    """(what was recorded, '') or (None, why not): never raises an edgefarm error."""
    try:
        with opened(target) as db:
            return record(db, run_dir, report), ""
    except EdgefarmError as e:
        return None, str(e)


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
