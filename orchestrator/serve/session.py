"""A serve session on the run's records: a run folder (run.json kind "serve", one folder per device with
device.json, results.jsonl and outcome.json) where every request is a row as it finishes, and at the end
the run's own reports (report/build.py) and the results database (history's end-of-run hook), so
`edgefarm report` and `history` show a serve session like a run."""

from __future__ import annotations

import threading
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from rich.console import Console

from android_runner.contract import SampleResult

from ..farm.run_json import DatasetStamp, ModelStamp, RunJson
from ..farm.rundir import (
    device_folder,
    host_info,
    new_run_dir,
    utc_now,
    versions,
    write_outcome,
    write_run_json,
)
from ..farm.types import DeviceOutcome
from ..fsutil import output_errors, write_json_atomic
from ..history.record import remember
from ..models import ModelSummary
from ..report.build import load_report, write_reports
from ..run.types import RunRecord
from ..runners.stamp import device_versions, state_span
from .engine import Engine

KIND = "serve"  # run.json `kind` of a serve session


class ServeSession:
    """The run folder of one `edgefarm serve`: rows appended as requests finish (thread-safe)."""

    def __init__(self, out: Path, model: ModelSummary, devices: tuple[str, ...], flags: dict[str, Any],
                 token_limit: int | None) -> None:  # fmt: skip
        self.run_id, self.run_dir, started = new_run_dir(out)
        self.record = RunJson(run_id=self.run_id, started_at=started, model=ModelStamp.of(model, token_limit),
                              dataset=DatasetStamp(name="serve requests", format=KIND), devices=devices,
                              flags=flags, host=host_info(), kind=KIND)  # fmt: skip
        write_run_json(self.run_dir, self.record)
        self._lock = threading.Lock()
        self.rows: dict[str, list[SampleResult]] = {name: [] for name in devices}
        self.ids: list[str] = []

    def folder(self, device: str) -> Path:
        return device_folder(self.run_dir, device)

    def row(self, engine: Engine, row: SampleResult) -> None:
        """One finished request: appended to its device's results.jsonl at once (a crash keeps it)."""
        name = engine.device.name
        path = self.folder(name) / "results.jsonl"
        with self._lock, output_errors(path):
            if engine.info is not None and not (self.folder(name) / "device.json").exists():
                write_json_atomic(self.folder(name) / "device.json", asdict(engine.info))
            with open(path, "a", encoding="utf-8") as f:
                f.write(row.to_json() + "\n")
            self.rows[name].append(row)
            if row.id not in self.ids:
                self.ids.append(row.id)

    def finish(self, engines: list[Engine], db: str | None, console: Console) -> Path | None:
        """run.json's end, each device's outcome.json, the reports and the database; report.html's path
        (None when no request was answered: nothing to report)."""
        outcomes = []
        for e in engines:
            dev = self.folder(e.device.name)
            dev.mkdir(parents=True, exist_ok=True)
            if e.info is not None:
                write_json_atomic(dev / "device.json", asdict(e.info))
            runner = {**e.runner, "state": state_span(self.rows[e.device.name])} if e.runner else {}
            outcome = DeviceOutcome(name=e.device.name, kind=e.device.kind, runner=runner, model_loads=e.loads,
                                    model_push=e.pushed[0], other_push=e.pushed[1],
                                    error="" if e.state != "down" else e.reason,
                                    error_code=e.error_code if e.state == "down" else 0,
                                    notes=[f"served {len(self.rows[e.device.name])} request(s)",
                                           *([e.hold.note] if e.hold is not None and e.hold.note else [])])  # fmt: skip
            write_outcome(dev, outcome)
            outcomes.append(outcome)
        self.record = replace(
            self.record,
            # every request is its own sample, answered by one device: no device is partial for lack of another's
            dataset=replace(self.record.dataset, samples_total=len(self.ids), sample_ids=tuple(self.ids)),
            finished_at=utc_now().isoformat(timespec="seconds"),
            versions=versions(),
            device_versions=device_versions({e.device.name: e.runner for e in engines}),
        )
        write_run_json(self.run_dir, self.record)
        if not self.ids:
            return None
        report = load_report(self.run_dir, self.record)
        paths = write_reports(self.run_dir, report)
        remember(
            db, console, run=RunRecord(self.run_id, self.run_dir, report, paths, tuple(outcomes), False, 0)
        )
        return paths["html"]
