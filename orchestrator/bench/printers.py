"""`edgefarm bench -o md|csv|json|jsonl|sql`: one list of rows (rows.LlamaRow records), five views,
registered in the one printer registry (orchestrator/printers.py).

Pure. The field list is written once (rows.FIELDS, the record's codec `to_dict`); json, jsonl, csv
and sql carry every field, in llama-bench's layout (json: an array of rows; sql: CREATE TABLE + one
INSERT per row), so scripts that read llama-bench's output read these; md is the table for people.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from typing import Any

from ..catalogue import ON_TG
from ..printers import BENCH_ROWS, Printers
from ..report.facts import conditions_problems, conditions_text
from ..telemetry.conditions import RunConditions
from .results import bench_measures
from .rows import FIELDS, LlamaRow

Rows = Sequence[LlamaRow]
SQL_TABLE = "edgefarm_bench"


def to_json(rows: Rows) -> str:
    return json.dumps([r.to_dict() for r in rows], indent=2, ensure_ascii=False) + "\n"


def to_jsonl(rows: Rows) -> str:
    return "".join(json.dumps(r.to_dict(), ensure_ascii=False) + "\n" for r in rows)


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, list):
        return " ".join(str(x) for x in v)
    return str(v)


def to_csv(rows: Rows) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(FIELDS)
    for r in rows:
        w.writerow([_cell(v) for v in r.to_dict().values()])
    return out.getvalue()


def _sql_value(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else "NULL"
    return "'" + _cell(v).replace("'", "''") + "'"


def _sql_type(name: str, rows: Rows) -> str:
    kinds = {type(v) for r in rows if (v := getattr(r, name)) is not None}
    if kinds <= {int}:
        return "INTEGER"
    if kinds <= {int, float}:
        return "REAL"
    return "TEXT"


def to_sql(rows: Rows) -> str:
    cols = ", ".join(f"{k} {_sql_type(k, rows)}" for k in FIELDS)
    lines = [f"CREATE TABLE IF NOT EXISTS {SQL_TABLE} ({cols});"]
    names = ", ".join(FIELDS)
    for r in rows:
        values = ", ".join(_sql_value(v) for v in r.to_dict().values())
        lines.append(f"INSERT INTO {SQL_TABLE} ({names}) VALUES ({values});")
    return "\n".join(lines) + "\n"


def _num(v: Any, fmt: str = "{:.2f}") -> str:
    return "-" if v is None else fmt.format(v)


def to_md(rows: Rows) -> str:
    tg = [m for m in bench_measures() if m.bench == ON_TG]  # TTFT, energy per token...: the tg row's
    head = ("| device | backend | threads | test | depth | t/s (mean ± sd) | 95% interval | reps | "
            + "".join(f"{m.label} {m.unit} | " for m in tg) + "init ms (load) | peak MB |")  # fmt: skip
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        speed = "-" if r.avg_ts is None else f"{r.avg_ts:.2f} ± {r.stddev_ts or 0:.2f}"
        ci = "-" if r.ci95_lo_ts is None else f"{r.ci95_lo_ts:.2f} - {r.ci95_hi_ts:.2f}"
        load = "" if r.engine_load is None else f" (#{r.engine_load})"
        errs = f", {r.errors} failed" if r.errors else ""
        reps = f"{r.repetitions}{errs}"
        if not r.repetitions and not r.errors:  # a cell an interrupted bench did not reach
            speed, reps = "not measured", "0"
        lines.append(
            f"| {r.device} | {r.backend_ran or r.backends} | {r.n_threads or 'default'} "
            f"| {r.test} | {r.n_depth} | {speed} | {ci} | {reps} "
            f"| {''.join(_num(getattr(r, m.name)) + ' | ' for m in tg)}{_num(r.init_ms, '{:.1f}')}{load} "
            f"| {_num(r.peak_rss_mb, '{:.1f}')} |"
        )
    return "\n".join(lines) + "\n"


def conditions_md(conditions: RunConditions | None) -> str:
    """bench-rows.md's end: the conditions the bench ran under and what was bad during it, as the run's
    report.md says them (report/facts.py); '' when none were recorded. The machine formats keep
    llama-bench's layout: their conditions are in run.json."""
    text, bad = conditions_text(conditions), conditions_problems(conditions)
    lines = ([f"- conditions: {text}"] if text else []) + [f"- {p}" for p in bad]
    return "\n## Conditions (docs/conditions.md)\n\n" + "\n".join(lines) + "\n" if lines else ""


PRINTERS = Printers(BENCH_ROWS)  # these, in the one printer registry (orchestrator/printers.py)
