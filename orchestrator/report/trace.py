"""`edgefarm report RUN --format trace`: the run as a Chrome/Perfetto trace (pure).

The Trace Event Format's JSON object form ({"traceEvents": [...]}, opens in ui.perfetto.dev and
chrome://tracing): one process track per device (pid = its place in the report, named by a metadata
event), and on it
- complete events (`ph: "X"`, never B/E pairs): the engine load, then one slice per sample in run
  order with its set-up, prefill (the runtime's time to first token) and decode (the rest of the
  runtime's time) inside it;
- counters (`ph: "C"`): temperature (°C), the OS's thermal status, battery current (mA) and the
  sample's peak memory (MB), where the run has them, at each sample's end;
- instant events (`ph: "i"`): cooldown and settle waits, stalls (a sample over STALL_FACTOR times the
  device's median time per sample) and failed samples (their status and error).

Devices record durations, not timestamps: each device's timeline is laid out from its own durations,
starting at 0 (engine load, then waits and samples back to back), so two tracks line up in shape, not
in wall-clock time (docs/conditions.md).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterator
from typing import Any

from android_runner.status import FAILED_STATUSES

from .types.device_row import DeviceRow
from .types.run_report import RunReport
from .types.sample_row import SampleCell

STALL_FACTOR = 4.0  # a sample this many times the device's median time per sample is marked a stall
US_PER_MS = 1000.0
SAMPLES_TID = 1  # the device's one thread track: its samples, their phases and its markers
COUNTERS = (  # SampleCell field -> (counter name, series name)
    ("thermal_c", "temperature °C", "c"),
    ("thermal_status", "thermal status", "level"),
    ("battery_ma", "battery current mA", "ma"),
    ("peak_rss_mb", "memory MB", "peak_rss"),
)


def _x(pid: int, name: str, cat: str, ts: float, dur: float, args: dict[str, Any] | None = None) -> dict:
    event = {"ph": "X", "pid": pid, "tid": SAMPLES_TID, "name": name, "cat": cat, "ts": round(ts, 3),
             "dur": round(max(dur, 0.0), 3)}  # fmt: skip
    return event | ({"args": args} if args else {})


def _mark(pid: int, name: str, cat: str, ts: float, args: dict[str, Any]) -> dict:
    return {"ph": "i", "s": "t", "pid": pid, "tid": SAMPLES_TID, "name": name, "cat": cat, "ts": round(ts, 3),
            "args": args}  # fmt: skip


def _phases(pid: int, start: float, cell: SampleCell) -> Iterator[dict]:
    """Set-up, prefill and decode inside one sample's slice (each clipped to the slice)."""
    wall = (cell.wall_ms or 0.0) * US_PER_MS
    infer = min((cell.infer_ms or 0.0) * US_PER_MS, wall)
    if not infer:
        return
    setup = wall - infer
    prefill = min((cell.ttft_ms or 0.0) * US_PER_MS, infer)
    if setup:
        yield _x(pid, "set-up", "phase", start, setup)
    if prefill:
        yield _x(pid, "prefill", "phase", start + setup, prefill, {"prefill_tps": cell.prefill_tps})
    yield _x(pid, "decode", "phase", start + setup + prefill, infer - prefill, {"decode_tps": cell.decode_tps})


def _device_events(pid: int, row: DeviceRow, report: RunReport) -> Iterator[dict]:
    yield {"ph": "M", "pid": pid, "name": "process_name", "args": {"name": row.device}}
    yield {"ph": "M", "pid": pid, "name": "process_sort_index", "args": {"sort_index": pid}}
    yield {"ph": "M", "pid": pid, "tid": SAMPLES_TID, "name": "thread_name", "args": {"name": "samples"}}
    t = 0.0
    if row.init_ms:
        yield _x(pid, "engine load", "load", t, row.init_ms * US_PER_MS, {"runner": row.runner_kind})
        t += row.init_ms * US_PER_MS
    for s in row.settle:  # --settle: the gate before the block (its wait moves the timeline)
        name = "settle" if s.settled else "settle: not applied" if s.settled is None else "settle: NOT settled"
        yield _mark(pid, name, "wait", t, s.to_dict())
        t += s.waited_s * 1e6
    cells = [(s.id, s.cells[row.device]) for s in report.samples if row.device in s.cells]
    walls = [c.wall_ms for _, c in cells if c.status == "ok" and c.wall_ms]
    stall_ms = STALL_FACTOR * statistics.median(walls) if walls else None
    for sample_id, cell in cells:
        if cell.cooldown_s:
            yield _mark(pid, "cooldown wait", "wait", t, {"waited_s": cell.cooldown_s, "sample": sample_id})
            t += cell.cooldown_s * 1e6
        args = {"status": cell.status, "ttft_ms": cell.ttft_ms, "wall_ms": cell.wall_ms, "backend": cell.backend}
        args |= {"ran_on": cell.ran_on} if cell.ran_on else {}
        args |= {"stood_in": True} if cell.stood_in else {}
        yield _x(pid, sample_id, "sample", t, (cell.wall_ms or 0.0) * US_PER_MS, args)
        yield from _phases(pid, t, cell)
        end = t + (cell.wall_ms or 0.0) * US_PER_MS
        if cell.status in FAILED_STATUSES:
            yield _mark(pid, f"failed: {cell.status}", "failure", end, {"sample": sample_id, "error": cell.error})
        if stall_ms and cell.wall_ms and cell.wall_ms > stall_ms:
            yield _mark(pid, "stall", "stall", end, {"sample": sample_id, "wall_ms": cell.wall_ms,
                                                      "median_ms": round(stall_ms / STALL_FACTOR, 3)})  # fmt: skip
        for field, name, series in COUNTERS:
            value = getattr(cell, field)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                yield {"ph": "C", "pid": pid, "name": name, "ts": round(end, 3), "args": {series: value}}
        t = end


def trace_events(report: RunReport) -> list[dict]:
    """Every device's events, devices in the report's order."""
    return [e for pid, row in enumerate(report.devices, 1) for e in _device_events(pid, row, report)]


def to_trace(report: RunReport) -> str:
    """The trace file's text (JSON object form)."""
    other = {"run_id": report.run_id, "timeline": "laid out from each device's durations, from 0 (no device clock)"}
    return json.dumps({"traceEvents": trace_events(report), "displayTimeUnit": "ms", "otherData": other},
                      ensure_ascii=False) + "\n"  # fmt: skip
