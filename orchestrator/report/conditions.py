"""The conditions a device's figures were measured under (docs/conditions.md), pure: --settle's gate
before each block, stated per device in every view; a device that did not settle is flagged (its
status says so and it is never marked best), not mixed in silently. And its thermal state over the
run: the OS's thermal status, the clock caps the governor set, samples the OS stopped for heat."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from android_runner.contract import SampleResult, Settle
from android_runner.status import Status

from ..telemetry.android import THERMAL_STATUS_NAMES
from .types.run_report import RunReport


def settle_records(rows: Iterable[SampleResult]) -> tuple[Settle, ...]:
    """Each block's settle record, in run order (the block's first row carries it: a warm-up's too)."""
    return tuple(r.settle for r in rows if r.settle is not None)


def _temps(s: Settle) -> str:
    return ", ".join(f"{n} {s.start_c[n]:.1f}→{s.end_c[n]:.1f} °C" if n in s.end_c else f"{n} {s.start_c[n]:.1f} °C"
                     for n in s.start_c)  # fmt: skip


def settle_text(s: Settle) -> str:
    """One block's gate in words."""
    if s.settled is None:
        return "settle not applied: no temperature sensor readable"
    how = (f"settled after {s.waited_s:.0f} s" if s.settled else
           f"NOT settled after {s.waited_s:.0f} s (max {s.max_wait_s:g} s): still {s.span_c or 0:.1f} °C over {s.window_s:g} s")  # fmt: skip
    temps = _temps(s)
    return f"{how} (< {s.limit_c:g} °C over {s.window_s:g} s)" + (f"; {temps}" if temps else "")


def unsettled_text(records: Iterable[Settle]) -> str:
    """The flag of a device that did not settle before a block ("" when every gated block settled)."""
    bad = [s for s in records if s.settled is False]
    if not bad:
        return ""
    worst = max(bad, key=lambda s: s.span_c or 0.0)
    return (f"unsettled: {len(bad)} block(s) measured still changing by up to {worst.span_c or 0:.1f} °C over "
            f"{worst.window_s:g} s")  # fmt: skip


def _reading(r: SampleResult, key: str) -> list[float]:
    out = []
    for snap in (r.thermal_before, r.thermal_after):
        v = snap.get(key) if isinstance(snap, Mapping) else None
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out.append(float(v))
    return out


def thermal_text(rows: Iterable[SampleResult]) -> str:
    """A device's thermal state over its rows, in words ("" when the rows say nothing about it): the
    highest thermal status the OS reported, the lowest CPU clock cap against the highest clock seen, and
    the samples the OS stopped for heat."""
    rows = list(rows)
    parts = []
    statuses = [int(v) for r in rows for v in _reading(r, "thermal_status")]
    if statuses and max(statuses) > 0:
        top = max(statuses)
        name = THERMAL_STATUS_NAMES[top] if top < len(THERMAL_STATUS_NAMES) else "?"
        parts.append(f"thermal status up to {top} ({name})")
    caps = [v for r in rows for v in _reading(r, "cpu_cap_mhz")]
    clocks = caps + [v for r in rows for v in _reading(r, "cpu_mhz")]
    if caps and min(caps) < max(clocks):
        parts.append(f"CPU capped down to {min(caps):.0f} MHz (highest seen {max(clocks):.0f})")
    stops = sum(r.status == Status.THERMAL_STOP for r in rows)
    if stops:
        parts.append(f"{stops} sample(s) stopped by the OS for heat")
    return "; ".join(parts)


def conditions_lines(report: RunReport) -> list[str]:
    """Per device: its thermal state, and each block's settle gate (--settle runs only)."""
    out = [f"{row.device}: {row.thermal}" for row in report.devices if row.thermal]
    for row in report.devices:
        for n, s in enumerate(row.settle, 1):
            block = f" block {n}" if len(row.settle) > 1 else ""
            out.append(f"{row.device}{block}: {settle_text(s)}")
    return out

