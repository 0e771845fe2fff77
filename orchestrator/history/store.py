"""Runs into the results database and back out: one transaction per run, idempotent.

`write_run` replaces a run's earlier record (a resumed run, re-recorded) and leaves an unchanged one
alone, all inside one transaction: a process killed half-way leaves nothing of its write, and two
controllers writing the same run at once leave one copy (the second finds the first's row).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..bench.rows import LlamaRow
from ..report.types.sample_row import SampleCell
from .db import Database
from .entry import canonical, condition_problems, record_sha256
from .types import SAMPLE_FIELDS, DeviceEntry, Figure, Point, RunEntry, kept_cell

_RUN_COLUMNS = ("run_id", "kind", "started_at", "finished_at", "folder", "host", "edgefarm_version",
                "edgefarm_git", "model_name", "model_sha256", "dataset_path", "dataset_sha256", "slice_sha256",
                "samples", "shape", "flags", "versions", "record_sha256", "model_size_bytes", "quantization", "conditions")  # fmt: skip
_DEVICE_COLUMNS = ("run_id", "device", "kind", "hardware", "soc", "backend", "runner", "runner_sha256",
                   "runtime_version", "runtime_sha256", "config", "config_key", "error", "context_tokens")  # fmt: skip
_BENCH_COLUMNS = ("run_id", "device", "row_index", "test", "n_prompt", "n_gen", "n_depth", "avg_ts", "stddev_ts",
                  "fields")  # fmt: skip
_BOOLS = ("passed", "strict_passed")
MAX_FILTER_VALUES = 100
_HEX_PREFIX = re.compile(r"[0-9a-fA-F]{4,64}")  # a sha256 filter: at least 4 of its hex digits


def _insert(table: str, columns: Sequence[str], conflict: str = "") -> str:
    tail = f" ON CONFLICT ({conflict}) DO NOTHING" if conflict else ""
    marks = ", ".join("?" for _ in columns)
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks}){tail}"


def write_run(db: Database, entry: RunEntry) -> str:
    """'recorded', 'replaced' (the run's earlier record differed) or 'unchanged'."""
    digest = record_sha256(entry)
    with db.transaction():
        found = db.rows("SELECT record_sha256 FROM history_runs WHERE run_id = ?", (entry.run_id,))
        if found and found[0][0] == digest:
            return "unchanged"
        if found:
            for table in (
                "history_bench_rows",
                "history_samples",
                "history_figures",
                "history_devices",
                "history_runs",
            ):
                db.execute(f"DELETE FROM {table} WHERE run_id = ?", (entry.run_id,))
        values = {**{c: getattr(entry, c, None) for c in _RUN_COLUMNS}, "flags": canonical(entry.flags),
                  "versions": canonical(entry.versions), "record_sha256": digest}  # fmt: skip
        cur = db.execute(_insert("history_runs", _RUN_COLUMNS, "run_id"), [values[c] for c in _RUN_COLUMNS])
        if cur.rowcount == 0:  # another controller recorded it between our read and this insert
            return "unchanged"
        for d in entry.devices:
            _write_device(db, entry.run_id, d)
        db.executemany(_insert("history_bench_rows", _BENCH_COLUMNS), [
            (entry.run_id, str(r.device or ""), i, str(r.test or ""), r.n_prompt, r.n_gen, r.n_depth, r.avg_ts,
             r.stddev_ts, canonical(r.to_dict()))
            for i, r in enumerate(entry.bench_rows)])  # fmt: skip
    return "replaced" if found else "recorded"


def _write_device(db: Database, run_id: str, d: DeviceEntry) -> None:
    values = {
        **{c: getattr(d, c, None) for c in _DEVICE_COLUMNS},
        "run_id": run_id,
        "config": canonical(d.config),
    }
    db.execute(_insert("history_devices", _DEVICE_COLUMNS), [values[c] for c in _DEVICE_COLUMNS])
    db.executemany(
        _insert("history_figures", ("run_id", "device", "figure", "value", "lo", "hi")),
        [(run_id, d.device, name, f.value, f.lo, f.hi) for name, f in sorted(d.figures.items())],
    )
    columns = ("run_id", "device", "sample_id", *SAMPLE_FIELDS)
    db.executemany(
        _insert("history_samples", columns),
        [
            (run_id, d.device, sid, *(_stored(getattr(c, f)) for f in SAMPLE_FIELDS))
            for sid, c in d.samples.items()
        ],
    )


def _stored(value: Any) -> Any:
    return int(value) if isinstance(value, bool) else value


@dataclass(frozen=True)
class Filters:
    """`edgefarm history` filters; each a set of accepted values (empty: any)."""

    devices: tuple[str, ...] = ()
    models: tuple[str, ...] = ()  # model file name or sha256 (or its prefix)
    runtimes: tuple[str, ...] = ()  # runtime version or sha256 (or its prefix)
    backends: tuple[str, ...] = ()
    shapes: tuple[str, ...] = ()


@dataclass(frozen=True)
class DeviceRun:
    """A row of the history: one device in one run, with its configuration."""

    device: str
    hardware: str
    config: Mapping[str, Any]
    config_key: str
    point: Point


def _where(f: Filters, kind: str = "run") -> tuple[str, list[Any]]:
    clauses, params = ["r.kind = ?"], [kind]

    def any_of(columns: Sequence[str], values: Sequence[str], prefix: bool = False) -> None:
        if not values:
            return
        parts = []
        for v in values[:MAX_FILTER_VALUES]:
            for c in columns:
                if prefix and c.endswith("sha256"):
                    if _HEX_PREFIX.fullmatch(v):  # only hex digits reach LIKE: no wildcard from the user
                        parts.append(f"{c} LIKE ?")
                        params.append(v.lower() + "%")
                else:
                    parts.append(f"{c} = ?")
                    params.append(v)
        clauses.append("(" + " OR ".join(parts) + ")")

    any_of(["d.device"], f.devices)
    any_of(["r.model_name", "r.model_sha256"], f.models, prefix=True)
    any_of(["d.runtime_version", "d.runtime_sha256"], f.runtimes, prefix=True)
    any_of(["d.backend"], f.backends)
    any_of(["r.shape"], f.shapes)
    return " WHERE " + " AND ".join(clauses), params


def read_history(db: Database, filters: Filters = Filters()) -> list[DeviceRun]:
    """Every device of every run that passes the filters, oldest run first (ordered here, not by the
    database's collation, so SQLite and PostgreSQL give the same order)."""
    where, params = _where(filters)
    rows = db.rows(
        "SELECT r.run_id, r.started_at, r.finished_at, r.folder, r.model_sha256, r.edgefarm_version, d.device, "
        "d.hardware, d.backend, d.runner_sha256, d.runtime_version, d.runtime_sha256, d.config, d.config_key, "
        "d.context_tokens, r.model_name, r.model_size_bytes, r.quantization, r.conditions "
        f"FROM history_runs r JOIN history_devices d ON d.run_id = r.run_id{where}",
        params,
    )
    figures: dict[tuple[str, str], dict[str, Figure]] = {}
    if rows:
        for run_id, device, name, value, lo, hi in db.rows(
            "SELECT f.run_id, f.device, f.figure, f.value, f.lo, f.hi FROM history_figures f "
            f"JOIN history_devices d ON d.run_id = f.run_id AND d.device = f.device "
            f"JOIN history_runs r ON r.run_id = f.run_id{where}",
            params,
        ):
            figures.setdefault((run_id, device), {})[name] = Figure(value, lo, hi)
    out = []
    for (run_id, started, finished, folder, model_sha, ef_version, device, hardware, backend, runner_sha,
         runtime_version, runtime_sha, config, config_key, context, model_name, model_size, quantization,
         conditions) in sorted(
            rows, key=lambda r: (r[1], r[2], r[0], r[6])):  # fmt: skip
        point = Point(run_id, started, finished, folder, model_sha, runtime_version, runtime_sha, runner_sha, ef_version,
                      backend, dict(sorted(figures.get((run_id, device), {}).items())), context, model_name,
                      model_size, quantization or "", condition_problems(conditions or "", device))  # fmt: skip
        out.append(DeviceRun(device, hardware, json.loads(config), config_key, point))
    return out


def read_samples(db: Database, run_id: str, device: str) -> dict[str, SampleCell]:
    """sample id -> cell of one device in one run."""
    rows = db.rows(
        f"SELECT sample_id, {', '.join(SAMPLE_FIELDS)} FROM history_samples WHERE run_id = ? AND device = ?",
        (run_id, device),
    )
    out = {}
    for sid, *values in sorted(rows, key=lambda r: r[0]):
        cell = dict(zip(SAMPLE_FIELDS, values, strict=True))
        for b in _BOOLS:
            cell[b] = None if cell[b] is None else bool(cell[b])
        out[sid] = kept_cell(cell)
    return out


def read_bench_rows(db: Database, filters: Filters = Filters()) -> list[LlamaRow]:
    """Every recorded `edgefarm bench` row (llama-bench's fields) that passes the filters, oldest bench
    first, in each bench's own row order."""
    where, params = _where(filters, kind="bench")
    rows = db.rows(
        "SELECT r.started_at, r.run_id, b.device, b.row_index, b.fields FROM history_bench_rows b "
        "JOIN history_runs r ON r.run_id = b.run_id "
        f"JOIN history_devices d ON d.run_id = b.run_id AND d.device = b.device{where}",
        params,
    )
    return [LlamaRow.from_dict(json.loads(r[4])) for r in sorted(rows, key=lambda r: (r[0], r[1], r[3]))]


MAX_WHY_CHARS = 500


@dataclass(frozen=True)
class Exclusion:
    """A run (on one device, or every device: '') someone knows was disturbed, and why."""

    run_id: str
    device: str
    why: str
    excluded_at: str


def exclude(db: Database, exclusion: Exclusion) -> None:
    """Record `exclusion` (replacing an earlier one of the same run and device)."""
    with db.transaction():
        db.execute("DELETE FROM history_exclusions WHERE run_id = ? AND device = ?",
                   (exclusion.run_id, exclusion.device))  # fmt: skip
        db.execute(_insert("history_exclusions", ("run_id", "device", "why", "excluded_at")),
                   (exclusion.run_id, exclusion.device, exclusion.why, exclusion.excluded_at))  # fmt: skip


def include(db: Database, run_id: str, device: str) -> int:
    """Undo `exclude`: how many exclusions were removed."""
    with db.transaction():
        return int(db.execute("DELETE FROM history_exclusions WHERE run_id = ? AND device = ?",
                              (run_id, device)).rowcount)  # fmt: skip


def excluded(db: Database) -> dict[tuple[str, str], str]:
    """(run id, device or '') -> why, what history/series.py judges without."""
    return {(e.run_id, e.device): e.why for e in exclusions(db)}


def exclusions(db: Database) -> list[Exclusion]:
    return [Exclusion(*r) for r in sorted(db.rows(
        "SELECT run_id, device, why, excluded_at FROM history_exclusions"))]  # fmt: skip


def run_devices(db: Database, run_id: str) -> list[str]:
    """The devices recorded for `run_id` (none: the run is not in the database)."""
    return sorted(r[0] for r in db.rows("SELECT device FROM history_devices WHERE run_id = ?", (run_id,)))
