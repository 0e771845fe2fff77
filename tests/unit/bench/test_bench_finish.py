"""`edgefarm bench`'s finish (orchestrator/bench/finish.py): each device's figures from its session's
rows in memory, a failed or refused device's from its folder (as the run's report); run.json's end as
the run's record; the files of a partial grid; the run's exit codes."""

from __future__ import annotations

import html
import io
import json
import threading
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from android_runner.contract import SampleResult
from orchestrator.bench.execute import BenchExecution
from orchestrator.bench.finish import finish_bench
from orchestrator.bench.plan import BenchRequest, plan_bench
from orchestrator.devices.lock import DeviceBusy
from orchestrator.farm.rundir import device_folder, read_run_record
from orchestrator.farm.types import DeviceOutcome
from orchestrator.inventory import Selection
from orchestrator.models import ModelSummary
from orchestrator.report.terminal import conditions_parts
from orchestrator.telemetry.conditions import DeviceConditions, DeviceStart, RunConditions
from orchestrator.telemetry.host_load import HostLoad

MODEL = ModelSummary(
    path=Path("m.litertlm"), size_bytes=1, sha256="0" * 64, vision=False, audio=False, max_context_tokens=2048
)


class _Dev:
    kind, backend, threads = "local", "cpu", None

    def __init__(self, name: str) -> None:
        self.name = name


def _row(cell: str, rep: int, tps: float) -> SampleResult:
    return SampleResult(id=cell if rep == 1 else f"{cell}@r{rep}", status="ok", prefill_tokens=16,
                        prefill_tps=tps, backend="cpu")  # fmt: skip


def _finish(tmp_path: Path, outcomes, interrupted: bool = False, conditions: RunConditions | None = None):
    plan = plan_bench(BenchRequest(prompts="16", gens="0", repetitions=3), MODEL,
                      Selection((_Dev("fast"), _Dev("busy")), (), ()), None)  # fmt: skip
    run_dir = tmp_path / "20260101-000000-beef"
    record = plan.run_json(run_dir.name, "2026-01-01T00:00:00+00:00", {"hostname": "h"})
    record = replace(record, conditions=conditions)  # execute_bench's: farm/conditions.py measured
    stop = threading.Event()
    if interrupted:
        stop.set()
    return finish_bench(plan, BenchExecution(run_dir.name, run_dir, record, tuple(outcomes)), stop)


def test_rows_come_from_memory_and_a_refused_device_from_its_folder(tmp_path):
    cell = "p16-n0-d0-cpu"
    run_dir = tmp_path / "20260101-000000-beef"
    for name, rows in (("fast", [_row(cell, 1, 1.0)]), ("busy", [_row(cell, 1, 500.0)])):
        folder = device_folder(run_dir, name)  # fast's folder is stale: its session's memory must win
        folder.mkdir(parents=True)
        (folder / "results.jsonl").write_text("".join(r.to_json() + "\n" for r in rows))
    (device_folder(run_dir, "busy") / "repeats.jsonl").write_text(_row(cell, 2, 700.0).to_json() + "\n")
    fast = DeviceOutcome(name="fast", kind="local", results=[_row(cell, 1, 100.0)],
                         repeats=[_row(cell, 2, 110.0), _row(cell, 3, 120.0)])  # fmt: skip
    busy = DeviceOutcome(
        name="busy", kind="local", error="busy is in use by run x", error_code=DeviceBusy.exit_code
    )
    bench = _finish(tmp_path, [fast, busy])
    by = {c.device: c for c in bench.cells}
    assert by["fast"].figure("prefill_tps").samples == (100.0, 110.0, 120.0) and by["fast"].asked == 3
    assert by["busy"].figure("prefill_tps").samples == (500.0, 700.0)  # the earlier session's, read back
    assert bench.exit_code == DeviceBusy.exit_code == 3 and not bench.interrupted
    run = read_run_record(run_dir)  # run.json's end: the run's record through its one writer
    assert run.kind == "bench" and run.finished_at and run.outcomes["busy"]["error"].startswith("busy is")
    assert run.bench.cells == {"fast": (cell,), "busy": (cell,)} and run.bench.request["repetitions"] == 3
    assert json.loads((run_dir / "bench.json").read_text()) == bench.document()
    assert "2 of 3" in (run_dir / "report.html").read_text()  # busy's cell: cut short
    assert (run_dir / "bench-rows.md").read_text().count("| pp16 |") == 2


def test_an_interrupted_bench_exits_130_with_its_unmeasured_cells_said(tmp_path):
    stopped = DeviceOutcome(name="fast", kind="local", interrupted=True)
    bench = _finish(tmp_path, [stopped, replace(stopped, name="busy")], interrupted=True)
    assert bench.exit_code == 130 and bench.interrupted and all(c.repetitions == 0 for c in bench.cells)
    run_dir = tmp_path / "20260101-000000-beef"
    assert "| not measured |" in (run_dir / "bench-rows.md").read_text()
    assert (
        "partial grid: 0 of 2 cells measured in full, 0 cut short, 2 not measured"
        in (run_dir / "report.html").read_text()
    )


def test_the_conditions_the_bench_ran_under_are_on_its_pages_as_on_a_runs_report(tmp_path):
    """Issue 41: report.html, bench-rows.md and the terminal's end say run.json's conditions and what was
    bad during the bench by the rules, through the run's report's code (report/facts.py, terminal.py)."""
    loaded = RunConditions(HostLoad(12.0, 24, 2, 1.9, 2.3, 1.2, 1.5, 0.9),
                           {"fast": DeviceConditions(None, DeviceStart(47.0, 40.0, 2, 0.8, 3.1))})  # fmt: skip
    cell = "p16-n0-d0-cpu"
    fast = DeviceOutcome(name="fast", kind="local", results=[_row(cell, 1, 100.0)])
    bench = _finish(tmp_path, [fast, replace(fast, name="busy")], conditions=loaded)
    run_dir = tmp_path / "20260101-000000-beef"
    said = loaded.problems()
    assert [p.split(":")[0] for p in said] == ["LOADED", "THROTTLED", "BUSY", "HOT"]  # each rule broken
    stamp = "; ".join(loaded.lines())
    assert "other processes 1.20 cores" in stamp and "at its start background CPU 0.80 cores" in stamp
    page = (run_dir / "report.html").read_text()
    assert "<section id='conditions'>" in page and html.escape(stamp) in page
    assert all(f"<li>{html.escape(p)}</li>" in page for p in said)
    rows = (run_dir / "bench-rows.md").read_text()
    assert rows.count("| pp16 |") == 2 and "## Conditions" in rows.split("| pp16 |")[-1]  # under the table
    assert f"- conditions: {stamp}" in rows and all(f"- {p}" in rows for p in said)
    buf = io.StringIO()
    for part in conditions_parts(bench.run.conditions):  # what cli/bench.py prints at its end
        Console(file=buf, width=1000, color_system=None).print(part)
    assert buf.getvalue().splitlines() == [f"conditions: {stamp}", *said]
    quiet = _finish(tmp_path / "old", [fast])  # a run.json without conditions (an older edgefarm)
    old = tmp_path / "old" / "20260101-000000-beef"
    assert "id='conditions'" not in (old / "report.html").read_text() and quiet.run.conditions is None
    assert "Conditions" not in (old / "bench-rows.md").read_text()
