"""Stage 3 of `edgefarm bench`, as `edgefarm run`'s finish: run.json's end (the run's record and
writer), the figures of every cell from the devices' rows in memory, and bench.json, report.html and
bench-rows.<fmt> in the run folder, whatever part of the grid ran (an interrupted bench's unmeasured
cells are said as such: html.py, printers.py)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import replace

from android_runner.contract import SampleResult, read_results

from ..decode_bound import bound_ts
from ..farm.rundir import device_folder, utc_now, versions, write_run_json
from ..farm.types import DeviceOutcome
from ..fsutil import write_json_atomic, write_text_atomic
from ..interrupt import INTERRUPTED_EXIT
from ..printers import BENCH_ROWS, printer
from ..run.finish import exit_status  # the run's rule: the same exit codes
from .execute import BenchExecution
from .html_page import render as render_html
from .plan import BenchPlan
from .printers import conditions_md
from .record import BenchRecord
from .results import CellResult, cell_results
from .rows import llama_rows
from .sustained import sustained


def finish_bench(plan: BenchPlan, ex: BenchExecution, stop: threading.Event) -> BenchRecord:
    """run.json's end, the bench's record, and its files; the record holds the exit status."""
    run = replace(ex.record, finished_at=utc_now().isoformat(timespec="seconds"), versions=versions(),
                  outcomes={o.name: {"error": o.error, "model_loads": o.model_loads, "wall_s": o.wall_s,
                                     "interrupted": o.interrupted, "runner": o.runner} for o in ex.outcomes})  # fmt: skip
    write_run_json(ex.run_dir, run)
    rows = device_rows(plan, ex)
    asked = plan.request.repetitions * plan.request.sustain  # one of the two is 1 (plan_bench)
    cells = tuple(replace(r, decode_bound_ts=cell_bound(plan, r))
                  for d in plan.devices for r in cell_results(d.name, plan.grid[d.name], rows[d.name], asked))  # fmt: skip
    sustain = ({d.name: sustained(plan.grid[d.name], rows[d.name]) for d in plan.devices}
               if plan.request.sustain > 1 else {})  # fmt: skip
    interrupted = stop.is_set()
    record = BenchRecord(
        run_dir=ex.run_dir, run=run, cells=cells,
        rows=tuple(row for c in cells for row in llama_rows(c, run.model, run.started_at)), sustain=sustain,
        outcomes=ex.outcomes, interrupted=interrupted,
        exit_code=INTERRUPTED_EXIT if interrupted else exit_status(ex.outcomes),
    )  # fmt: skip
    document = record.document()
    write_json_atomic(ex.run_dir / "bench.json", document)
    write_text_atomic(ex.run_dir / "report.html", render_html(document, run.conditions))
    write_text_atomic(rows_path(record, plan.request.output), rows_file(record, plan.request.output))
    return record


def rows_file(record: BenchRecord, fmt: str) -> str:
    """bench-rows.<fmt>: the rows in the format; md, the table for people, ends with the conditions the
    bench ran under (stdout gets the rows alone: the conditions go to stderr with the bench's notes)."""
    rows = printer(BENCH_ROWS, fmt).text()(record.rows)
    return rows + conditions_md(record.run.conditions) if fmt == "md" else rows


def rows_path(record: BenchRecord, fmt: str):
    """bench-rows.<suffix> in the run folder (the format's, orchestrator/printers.py)."""
    return record.run_dir / f"bench-rows.{printer(BENCH_ROWS, fmt).suffix}"


def device_rows(plan: BenchPlan, ex: BenchExecution) -> Mapping[str, list[SampleResult]]:
    """Each device's counted rows (first repetitions, then the others; warm-ups left out): a session
    that ended without an error has them in memory, as the run's report takes its settled devices';
    any other (refused as busy, lost) left only what earlier sessions wrote, read from its folder."""
    settled: dict[str, DeviceOutcome] = {o.name: o for o in ex.outcomes if not o.error}
    out = {}
    for d in plan.devices:
        o = settled.get(d.name)
        if o is not None:
            out[d.name] = [*o.results, *o.repeats]
        else:
            folder = device_folder(ex.run_dir, d.name)
            out[d.name] = [
                *read_results(str(folder / "results.jsonl")),
                *read_results(str(folder / "repeats.jsonl")),
            ]
    return out


def cell_bound(plan: BenchPlan, r: CellResult) -> float | None:
    """The device's bandwidth bound on the cell's decode, at the decode's mean context (depth, prompt,
    half the generated tokens); None when the device's bandwidth or the model's facts are unknown."""
    c = r.cell
    return bound_ts(plan.bandwidth_gbs.get(r.device), plan.model.facts, c.n_depth + c.n_prompt + c.n_gen / 2)


__all__ = ["cell_bound", "device_rows", "finish_bench", "rows_file", "rows_path"]
