"""`edgefarm bench --sustain N`: the grid N times back to back, and each pass's speed against the first.

Pure. A pass runs every cell once (pass after pass, no cooldown; android_runner/bench.py bench_order
keeps the passes in time order). Per device and pass: each cell's prefill and decode tokens/s, and
their median over the cells of the pass's speed as a percentage of the same cell's speed in pass 1
(a cell against itself, so cells of every shape count alike); the time under load at the pass's end,
the hottest temperature, the highest thermal status and the lowest CPU/GPU clock read after its cells,
and the first throttle (orchestrator/sustain.py's definitions, from the same rows).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from android_runner.contract import SampleResult

from ..measure import base_id
from ..sustain import curve
from .grid import Cell


@dataclass(frozen=True)
class BenchPass:
    sustain_pass: int
    end_s: float | None  # time under load at the pass's end (the rows' wall times, in run order)
    prefill_pct_of_first: float | None  # median over the cells of (this pass / pass 1) x 100
    decode_pct_of_first: float | None
    max_temp_c: float | None
    thermal_status: int | None
    cpu_mhz: float | None
    gpu_mhz: float | None
    cells: Mapping[str, Mapping[str, float | None]]  # cell id -> {"prefill_tps", "decode_tps"} in this pass


@dataclass(frozen=True)
class BenchSustain:
    passes: tuple[BenchPass, ...]
    first_throttle_s: float | None
    throttle_why: str
    steady_prefill_pct: float | None  # the last pass's prefill_pct_of_first
    steady_decode_pct: float | None
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
    speeds: dict[int, dict[str, dict[str, float | None]]] = {}
    for r in rows:
        if r.sustain_pass and r.status == "ok":
            speeds.setdefault(r.sustain_pass, {})[base_id(r.id)] = {"prefill_tps": r.prefill_tps,
                                                                    "decode_tps": r.decode_tps}  # fmt: skip
    heat = curve(rows)
    if heat is None:
        return None
    first = speeds.get(1, {})
    ids = [c.id for c in grid]
    passes = []
    for p in heat.passes:
        mine = speeds.get(p.sustain_pass, {})
        pct = {k: _median([_pct(mine.get(i, {}).get(k), first.get(i, {}).get(k)) for i in ids])
               for k in ("prefill_tps", "decode_tps")}  # fmt: skip
        passes.append(BenchPass(
            sustain_pass=p.sustain_pass, end_s=p.end_s, prefill_pct_of_first=pct["prefill_tps"],
            decode_pct_of_first=pct["decode_tps"], max_temp_c=p.max_temp_c, thermal_status=p.thermal_status,
            cpu_mhz=p.cpu_mhz, gpu_mhz=p.gpu_mhz, cells={i: mine[i] for i in ids if i in mine},
        ))  # fmt: skip
    last = passes[-1]
    return BenchSustain(tuple(passes), heat.first_throttle_s, heat.throttle_why, last.prefill_pct_of_first,
                        last.decode_pct_of_first, heat.ending, heat.ending_why).to_json()  # fmt: skip


def summary(device: str, s: Mapping[str, Any]) -> str:
    """One line per device: the first throttle and the last pass against the first."""
    throttle = (f"first throttle after {s['first_throttle_s']:.1f} s under load ({s['throttle_why']})"
                if s.get("first_throttle_s") is not None else "no throttle seen")  # fmt: skip
    figures = [f"{what} {s[key]:.0f}%" for what, key in (("prefill", "steady_prefill_pct"),
               ("decode", "steady_decode_pct")) if s.get(key) is not None]  # fmt: skip
    last = f"pass {len(s['passes'])} at " + " and ".join(figures) + " of pass 1" if figures else "no speed"
    ending = f"; {s['ending']}: {s.get('ending_why', '')}" if s.get("ending") else ""
    return f"{device}: {throttle}; {last} (median over the cells){ending}"


HEADERS = ("Device", "Pass", "Time (s)", "Prefill % of pass 1", "Decode % of pass 1", "Temp (C)",
           "Thermal status", "CPU (MHz)", "GPU (MHz)")  # fmt: skip


def table(curves: Mapping[str, Mapping[str, Any] | None]) -> list[list[str]]:
    """A row per device and pass (HEADERS)."""

    def cell(v: Any, fmt: str = "{:.1f}") -> str:
        return "-" if v is None else fmt.format(v)

    out = []
    for device, s in curves.items():
        for p in (s or {}).get("passes", ()):
            out.append([device, str(p["sustain_pass"]), cell(p["end_s"]), cell(p["prefill_pct_of_first"]),
                        cell(p["decode_pct_of_first"]), cell(p["max_temp_c"]), cell(p["thermal_status"], "{}"),
                        cell(p["cpu_mhz"], "{:.0f}"), cell(p["gpu_mhz"], "{:.0f}")])  # fmt: skip
    return out


__all__ = ["HEADERS", "BenchPass", "BenchSustain", "summary", "sustained", "table"]
