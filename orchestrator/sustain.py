"""Sustained load (`--sustain N`): one device's speed, temperature and clocks pass after pass (pure).

The same samples run N times back to back without cooldown; every row carries its `sustain_pass`.
Per pass: the median over its ok rows of each per-pass figure of the catalogue (catalogue.PER_PASS:
the time per sample, prefill and decode speed; a figure added there is a field, a table column and a
chart panel here too), the hottest temperature and the highest thermal status the hook saw after its
samples, and the lowest CPU/GPU clock read after them
(`thermal_after.cpu_mhz` / `gpu_mhz`, where the phone lets them be read). The time axis is the
cumulative wall time of the rows in run order (back to back, so it is the time under load).
- first throttle: the end of the first sample after which the thermal status was THROTTLING_LIGHT
  (1) or higher, or the CPU clock was below 90% of the highest clock seen in pass 1;
- steady state: the last pass's median decode speed as a fraction of the first pass's;
- ending (issue 45): `os_stop` when the OS stopped the runner for heat (a `thermal_stop` row), else
  `graceful` when it throttled (above) or its last pass ran below STEADY_MIN of the first's speed, else
  `steady`.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from android_runner.contract import SampleResult

from .catalogue import PER_PASS, Measure, measures, with_fields

CLOCK_DROP = 0.9  # a clock (or its cap) below this fraction of pass 1's highest is a throttle
STEADY_MIN = 0.9  # a last pass below this fraction of the first's decode speed slowed down
OS_STOP, GRACEFUL, STEADY = "os_stop", "graceful", "steady"


@dataclass(frozen=True)
@with_fields(m.name for m in measures(PER_PASS))  # a new per-pass catalogue measure: a field after these
class PassFigures:
    sustain_pass: int
    rows: int
    end_s: float  # cumulative wall time at the pass's end
    wall_ms: float | None  # the per-pass measures: each the median over the pass's ok samples
    decode_tps: float | None
    prefill_tps: float | None
    max_temp_c: float | None
    thermal_status: int | None
    cpu_mhz: float | None
    gpu_mhz: float | None
    cpu_cap_mhz: float | None = None  # the lowest cap the governor set (scaling_max_freq) after its samples
    thermal_stops: int = 0  # rows the OS stopped for heat


@dataclass(frozen=True)
class SustainCurve:
    passes: tuple[PassFigures, ...]
    first_throttle_s: float | None  # None: no throttle seen
    throttle_why: str
    steady_fraction: float | None  # last pass's decode speed / first pass's
    ending: str = STEADY  # os_stop | graceful | steady (the module's docstring)
    ending_why: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _after(r: SampleResult, key: str) -> float | None:
    t = r.thermal_after
    v = t.get(key) if isinstance(t, Mapping) else None
    return float(v) if isinstance(v, (int, float)) else None


def _median(values: Sequence[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return round(statistics.median(vals), 3) if vals else None


def _temp(r: SampleResult) -> float | None:
    temps = [v for v in (_after(r, "max_temp_c"), _after(r, "battery_temp_c")) if v is not None]
    return max(temps) if temps else None


def curve(rows: Sequence[SampleResult]) -> SustainCurve | None:
    """The device's sustain curve from its rows (results + repeats), None without --sustain rows."""
    mine = sorted((r for r in rows if r.sustain_pass), key=lambda r: r.sustain_pass or 0)
    if not mine or max(r.sustain_pass or 0 for r in mine) < 2:
        return None
    passes, elapsed = [], 0.0
    first_clock = max((c for r in mine if r.sustain_pass == 1 and (c := _after(r, "cpu_mhz"))), default=None)
    throttle_s, why, stop = None, "", None
    for k in sorted({r.sustain_pass or 0 for r in mine}):
        group = [r for r in mine if r.sustain_pass == k]
        for r in group:
            elapsed += (r.wall_ms or 0.0) / 1000.0
            status, clock = _after(r, "thermal_status"), _after(r, "cpu_mhz")
            cap = _after(r, "cpu_cap_mhz")
            if r.status == "thermal_stop" and stop is None:
                stop = f"the OS stopped the runner for heat in pass {k} (sample {r.id}, after {elapsed:.1f} s)"
            if throttle_s is None and status is not None and status >= 1:
                throttle_s, why = elapsed, f"thermal status {int(status)} after pass {k}'s sample {r.id}"
            elif throttle_s is None and clock and first_clock and clock < CLOCK_DROP * first_clock:
                throttle_s, why = (
                    elapsed,
                    f"CPU clock {clock:.0f} MHz (pass 1: {first_clock:.0f}) after {r.id}",
                )
            elif throttle_s is None and cap and first_clock and cap < CLOCK_DROP * first_clock:
                throttle_s, why = elapsed, f"CPU capped at {cap:.0f} MHz (pass 1: {first_clock:.0f}) after {r.id}"
        ok = [r for r in group if r.status == "ok"]
        temps = [t for r in group if (t := _temp(r)) is not None]
        statuses = [int(s) for r in group if (s := _after(r, "thermal_status")) is not None]
        cpus = [c for r in group if (c := _after(r, "cpu_mhz")) is not None]
        gpus = [g for r in group if (g := _after(r, "gpu_mhz")) is not None]
        caps = [c for r in group if (c := _after(r, "cpu_cap_mhz")) is not None]
        passes.append(PassFigures(
            sustain_pass=k, rows=len(group), end_s=round(elapsed, 3),
            **{m.name: _median([m.value(r) for r in ok]) for m in measures(PER_PASS)},
            max_temp_c=max(temps) if temps else None, thermal_status=max(statuses) if statuses else None,
            cpu_mhz=min(cpus) if cpus else None, gpu_mhz=min(gpus) if gpus else None,
            cpu_cap_mhz=min(caps) if caps else None, thermal_stops=sum(r.status == "thermal_stop" for r in group),
        ))  # fmt: skip
    first, last = passes[0].decode_tps, passes[-1].decode_tps
    steady = round(last / first, 3) if first and last is not None else None
    if stop is not None:
        ending, ending_why = OS_STOP, stop
    elif throttle_s is not None or (steady is not None and steady < STEADY_MIN):
        slowed = f"last pass at {steady:.0%} of the first's decode speed" if steady is not None else "no speed"
        ending, ending_why = GRACEFUL, f"slowed without a stop: {why or 'no throttle mark'}; {slowed}"
    else:
        ending, ending_why = STEADY, "no throttle, no stop"
    return SustainCurve(tuple(passes), None if throttle_s is None else round(throttle_s, 3), why, steady,
                        ending, ending_why)  # fmt: skip


def _cell(v: Any, fmt: str = "{:.1f}") -> str:
    return "-" if v is None else fmt.format(v)


def table(curves: Mapping[str, Mapping[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """(headers, rows) of the per-pass table, a row per device and pass (report.json's `sustain`): the
    catalogue's per-pass measures with their label, unit and format, then the heat and clocks."""
    figures = measures(PER_PASS)
    headers = ["Device", "Pass", "Time (s)", *(m.column.header for m in figures), "Temp (C)", "Thermal status",
               "CPU (MHz)", "GPU (MHz)"]  # fmt: skip
    rows = []
    for name, c in curves.items():
        for p in c.get("passes", ()):
            rows.append([name, str(p["sustain_pass"]), _cell(p["end_s"]),
                         *(_cell(p.get(m.name), m.fmt) for m in figures),
                         _cell(p["max_temp_c"]), _cell(p["thermal_status"], "{}"),
                         _cell(p["cpu_mhz"], "{:.0f}"), _cell(p["gpu_mhz"], "{:.0f}")])  # fmt: skip
    return headers, rows


def directions(figures: Sequence[Measure]) -> str:
    """`Time per sample: lower is better; Prefill, Decode: higher is better` (the catalogue's)."""
    sides = {True: [m.label for m in figures if m.higher_is_better],
             False: [m.label for m in figures if not m.higher_is_better]}  # fmt: skip
    return "; ".join(f"{', '.join(labels)}: {'higher' if up else 'lower'} is better"
                     for up, labels in sorted(sides.items()) if labels)  # fmt: skip


def summary(name: str, c: Mapping[str, Any]) -> str:
    """One line per device: time to the first throttle and the steady-state speed."""
    throttle = (f"first throttle after {c['first_throttle_s']:.1f} s under load ({c['throttle_why']})"
                if c.get("first_throttle_s") is not None else "no throttle seen")  # fmt: skip
    steady = c.get("steady_fraction")
    speed = (
        f"last pass at {steady:.0%} of the first pass's decode speed" if steady is not None else "no speed"
    )
    ending = f"; {c['ending']}: {c.get('ending_why', '')}" if c.get("ending") else ""
    return f"{name}: {throttle}; {speed}{ending}"


def markdown(curves: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """report.md's sustained-load section ([] without --sustain)."""
    if not curves:
        return []
    headers, rows = table(curves)
    lines = ["", "## Sustained load (--sustain)", ""]
    lines += [f"- {summary(name, c)}" for name, c in curves.items()]
    lines += ["", "| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return lines


def html(curves: Mapping[str, Mapping[str, Any]], chart: str = "") -> str:
    """report.html's sustained-load section ('' without --sustain): a line per device (time to the
    first throttle, steady state), `chart` (every device's per-pass figures as % of its first pass
    against time, report/charts.py) and the per-pass table."""
    from html import escape

    if not curves:
        return ""
    headers, rows = table(curves)
    parts = ['<section id="sustain"><h2>Sustained load (--sustain)</h2><ul>']
    parts += [f"<li>{escape(summary(name, c))}</li>" for name, c in curves.items()]
    parts.append("</ul>")
    if chart:
        figures = measures(PER_PASS)
        caption = (f"{', '.join(m.label for m in figures)} as % of each device's first pass, against the time "
                   f"under load ({directions(figures)})")  # fmt: skip
        parts.append(f"<figure id='chart-sustain' class='chart'><figcaption>{escape(caption)}</figcaption>"
                     f"{chart}</figure>")  # fmt: skip
    parts.append(
        "<table><thead><tr>" + "".join(f"<th>{escape(h)}</th>" for h in headers) + "</tr></thead><tbody>"
    )
    parts += ["<tr>" + "".join(f"<td>{escape(v)}</td>" for v in r) + "</tr>" for r in rows]
    parts.append("</tbody></table></section>")
    return "".join(parts)
