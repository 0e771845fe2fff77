"""`edgefarm bench --sustain N`: the grid N times back to back, and each pass's speed against the first.

Pure. A pass runs every cell once (pass after pass, no cooldown; android_runner/bench.py bench_order
keeps the passes in time order). Per device and pass: each cell's value of each per-pass figure (the
catalogue's bench measures in its per-pass view: prefill and decode tokens/s; a figure added there
shows here too), and their median over the cells of the pass's value as a percentage of the same
cell's value in pass 1 (a cell against itself, so cells of every shape count alike); the time under
load at the pass's end, the hottest temperature, the highest thermal status and the lowest CPU/GPU
clock read after its cells, and the first throttle (orchestrator/sustain.py's definitions, from the
same rows).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from android_runner.contract import SampleResult

from ..catalogue import PER_PASS, Measure
from ..measure import base_id
from ..sustain import curve
from .grid import Cell
from .results import bench_measures


def pass_measures() -> tuple[Measure, ...]:
    """The figures of a pass: the bench's measures (results.bench_measures) in the catalogue's per-pass
    view (prefill and decode speed), with their name and label."""
    return tuple(m for m in bench_measures() if PER_PASS in m.views)


@dataclass(frozen=True)
class BenchPass:
    sustain_pass: int
    end_s: float | None  # time under load at the pass's end (the rows' wall times, in run order)
    # measure -> the median over the cells of (the cell's value in this pass / in pass 1) x 100
    pct_of_first: Mapping[str, float | None]
    max_temp_c: float | None
    thermal_status: int | None
    cpu_mhz: float | None
    gpu_mhz: float | None
    cells: Mapping[str, Mapping[str, float | None]]  # cell id -> {measure: its value in this pass}


@dataclass(frozen=True)
class BenchSustain:
    passes: tuple[BenchPass, ...]
    first_throttle_s: float | None
    throttle_why: str
    steady_pct: Mapping[str, float | None]  # the last pass's pct_of_first
    ending: str = ""  # orchestrator/sustain.py: os_stop | graceful | steady, from the same rows
    ending_why: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _pct(now: float | None, first: float | None) -> float | None:
    return 100.0 * now / first if now is not None and first else None


def _median(values: Sequence[float | None]) -> float | None:
    have = [v for v in values if v is not None]
    return round(statistics.median(have), 2) if have else None


def sustained(grid: Sequence[Cell], rows: Sequence[SampleResult]) -> dict[str, Any] | None:
    """A device's passes (bench.json `sustain`), from its counted rows (results + repeats, each
    carrying its `sustain_pass`); None with fewer than two passes."""
    figures = pass_measures()
    values: dict[int, dict[str, dict[str, float | None]]] = {}
    for r in rows:
        if r.sustain_pass and r.status == "ok":
            values.setdefault(r.sustain_pass, {})[base_id(r.id)] = {m.name: m.cell(r) for m in figures}
    heat = curve(rows)
    if heat is None:
        return None
    first = values.get(1, {})
    ids = [c.id for c in grid]
    passes = []
    for p in heat.passes:
        mine = values.get(p.sustain_pass, {})
        pct = {m.name: _median([_pct(mine.get(i, {}).get(m.name), first.get(i, {}).get(m.name)) for i in ids])
               for m in figures}  # fmt: skip
        passes.append(BenchPass(
            sustain_pass=p.sustain_pass, end_s=p.end_s, pct_of_first=pct, max_temp_c=p.max_temp_c,
            thermal_status=p.thermal_status, cpu_mhz=p.cpu_mhz, gpu_mhz=p.gpu_mhz,
            cells={i: mine[i] for i in ids if i in mine},
        ))  # fmt: skip
    return BenchSustain(tuple(passes), heat.first_throttle_s, heat.throttle_why, passes[-1].pct_of_first,
                        heat.ending, heat.ending_why).to_json()  # fmt: skip


def summary(device: str, s: Mapping[str, Any]) -> str:
    """One line per device: the first throttle and the last pass against the first."""
    throttle = (f"first throttle after {s['first_throttle_s']:.1f} s under load ({s['throttle_why']})"
                if s.get("first_throttle_s") is not None else "no throttle seen")  # fmt: skip
    steady = s.get("steady_pct") or {}
    figures = [f"{m.label.lower()} {steady[m.name]:.0f}%" for m in pass_measures()
               if steady.get(m.name) is not None]  # fmt: skip
    last = f"pass {len(s['passes'])} at " + " and ".join(figures) + " of pass 1" if figures else "no speed"
    ending = f"; {s['ending']}: {s.get('ending_why', '')}" if s.get("ending") else ""
    return f"{device}: {throttle}; {last} (median over the cells){ending}"


def headers() -> tuple[str, ...]:
    """The per-pass table's columns: each per-pass measure by its catalogue label."""
    return ("Device", "Pass", "Time (s)", *(f"{m.label} % of pass 1" for m in pass_measures()), "Temp (C)",
            "Thermal status", "CPU (MHz)", "GPU (MHz)")  # fmt: skip


def table(curves: Mapping[str, Mapping[str, Any] | None]) -> list[list[str]]:
    """A row per device and pass (headers())."""

    def cell(v: Any, fmt: str = "{:.1f}") -> str:
        return "-" if v is None else fmt.format(v)

    out = []
    for device, s in curves.items():
        for p in (s or {}).get("passes", ()):
            pct = p.get("pct_of_first") or {}
            out.append([device, str(p["sustain_pass"]), cell(p["end_s"]),
                        *(cell(pct.get(m.name)) for m in pass_measures()), cell(p["max_temp_c"]),
                        cell(p["thermal_status"], "{}"), cell(p["cpu_mhz"], "{:.0f}"),
                        cell(p["gpu_mhz"], "{:.0f}")])  # fmt: skip
    return out


__all__ = ["BenchPass", "BenchSustain", "headers", "pass_measures", "summary", "sustained", "table"]
