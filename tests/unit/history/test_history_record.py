"""The end-of-run hook takes the run's record in memory (history/record.py `remember(run=RunRecord)`):
no file of the run folder is read back (the folder need not exist); the runner identity comes from the
record's outcomes. `history import` reads folders through the run's decoders and checks device names
as devices.yaml does."""

from __future__ import annotations

import io
import json

import pytest
from history_runs import report
from rich.console import Console

from orchestrator.errors import ConfigError
from orchestrator.farm.types import DeviceOutcome
from orchestrator.history.db import opened
from orchestrator.history.record import folder_entry, remember, run_record_entry
from orchestrator.history.store import read_history
from orchestrator.run.types import RunRecord


def _record(run_dir, runtime="0.18.0"):
    rep = report("20260101-000000-aaaa", "2026-01-01T00:00:00+00:00", {"pixel-8": 100.0, "s24": 120.0})
    outcomes = [DeviceOutcome(name=n, kind="adb", runner={"runner": "native", "runner_sha256": "d" * 64,
                                                          "runtime_version": runtime, "runtime_sha256": "e" * 64})
                for n in ("pixel-8", "s24")]  # fmt: skip
    return RunRecord(rep.run_id, run_dir, rep, {}, outcomes, False, 0)


def _console():
    out = io.StringIO()
    return Console(file=out, width=200, color_system=None, soft_wrap=True), out


def test_the_run_is_recorded_from_its_record_without_its_folder(tmp_path):
    gone = tmp_path / "runs" / "20260101-000000-aaaa"  # never created: nothing can be read from it
    db = tmp_path / "h.sqlite"
    console, out = _console()
    remember(str(db), console, run=_record(gone))
    assert f"history: recorded in {db}" in out.getvalue() and not gone.exists()
    with opened(str(db)) as store:
        rows = read_history(store)
    # the record's device_versions (report.run) over its outcomes' runner stamps, as the folder gives them
    assert [(r.device, r.point.runtime_version, r.point.folder) for r in rows] == [
        ("pixel-8", "0.17.0", str(gone)), ("s24", "0.17.0", str(gone))]  # fmt: skip
    entry = run_record_entry(_record(gone))
    assert {d.runner_sha256 for d in entry.devices} == {"c" * 64}


def test_an_unreachable_database_names_the_folder_and_the_import_that_adds_it_later(tmp_path):
    console, out = _console()
    blocker = tmp_path / "file"
    blocker.write_text("")
    remember(str(blocker / "h.sqlite"), console, run=_record(tmp_path / "r1"))
    text = out.getvalue()
    assert "history: this run is not in the results database" in text
    assert f"edgefarm history import {tmp_path / 'r1'} --db {blocker / 'h.sqlite'}` adds it later" in text


def test_import_refuses_a_device_name_the_inventory_would_refuse(tmp_path):
    folder = tmp_path / "20260101-000000-aaaa"
    folder.mkdir()
    run = {"run_id": folder.name, "started_at": "2026-01-01T00:00:00+00:00", "devices": ["ok-1", "bad name\n[red]"],
           "model": {"path": "/m", "sha256": "a" * 64}}  # fmt: skip
    (folder / "run.json").write_text(json.dumps(run))
    with pytest.raises(ConfigError, match=r"'bad name\\n\[red\]' is not a device name") as e:
        folder_entry(folder)
    assert e.value.exit_code == 2 and str(folder / "run.json") in str(e.value)
