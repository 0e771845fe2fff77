"""A phone's energy over its whole pass from the fuel gauge's coulomb counter (pure).

`Charge counter` (uAh by the health HAL's ABI) is read by the driver's hook before and after every
sample; its drop from the first sample's start to the last one's end, times the mean voltage, is the
phone's energy over the pass: no lag and no unit doubt, but the idle gaps between samples are in it
and it moves in one step per gauge update. docs/energy.md says when it is used.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from android_runner.contract import SampleResult

from .energy import phone_gauge, reading_from_json, voltage_scale_v


@dataclass(frozen=True)
class PassEnergy:
    """The phone's energy over its whole pass from the gauge's coulomb counter (no lag, no unit doubt):
    from the first sample's start to the last one's end, idle gaps between samples included."""

    energy_j: float
    span_s: float
    samples_j: float  # the rows' own figures summed (trusted or not), for comparison
    coverage: float  # the samples' windows / the span
    apportioned: str  # "" when each row's share (row J / samples_j x energy_j) is sound, else why not
    unreliable: str = ""  # why the pass's own figure cannot be trusted ("" when it can)

    def to_json(self) -> dict[str, Any]:
        return {"energy_j": round(self.energy_j, 4), "span_s": round(self.span_s, 3),
                "mean_power_w": round(self.energy_j / self.span_s, 4), "samples_j": round(self.samples_j, 4),
                "coverage": round(self.coverage, 3), "apportioned": self.apportioned,
                "unreliable": self.unreliable}  # fmt: skip


APPORTION_COVERAGE_MIN = 0.9  # the samples must fill this much of the pass for shares to mean anything
PASS_UPDATES_MIN = 10  # the counter steps once per gauge update: a pass of fewer updates is off by 10%+


def pass_energy(rows: Sequence[SampleResult]) -> PassEnergy | None:
    """The pass's energy from `Charge counter` x mean voltage; None without counter readings."""
    timed = [(r, x) for r in rows if (x := reading_from_json(r.power)) and x.kind == "iv"
             and x.t0_s is not None and x.counter is not None and x.voltage_mean]  # fmt: skip
    if not timed:
        return None
    timed.sort(key=lambda p: p[1].t0_s or 0.0)
    first, last = timed[0][1], timed[-1][1]
    span_s = (last.t0_s or 0.0) + last.duration_s - (first.t0_s or 0.0)
    drop_uah = (first.counter or (0.0, 0.0))[0] - (last.counter or (0.0, 0.0))[1]
    if span_s <= 0:
        return None
    volts = sum(x.voltage_mean * voltage_scale_v(x.voltage_mean) * x.duration_s for _, x in timed) / sum(
        x.duration_s for _, x in timed
    )
    joules = abs(drop_uah) * 1e-6 * 3600.0 * volts
    samples_j = sum(r.energy_j or 0.0 for r, _ in timed)
    coverage = sum(x.duration_s for _, x in timed) / span_s
    why = []
    if any(x.external or x.charging for _, x in timed):
        why.append("external power: the counter measured the battery, not the load")
    if drop_uah <= 0:
        why.append("the counter did not drop over the pass")
    if coverage < APPORTION_COVERAGE_MIN:
        why.append(f"the samples fill {coverage:.0%} of the pass (gaps between them are in the counter)")
    if any(r.energy_j is None for r, _ in timed):
        why.append("a sample has no figure to share by")
    period = phone_gauge([x for _, x in timed]).period_s
    bad = [w for w in why if w.startswith(("external", "the counter did"))]
    if period is None and span_s < PASS_UPDATES_MIN:
        bad.append(f"the pass ({span_s:.1f} s) may hold fewer than {PASS_UPDATES_MIN} updates of the counter "
                   "(the gauge's period is unknown)")  # fmt: skip
    elif period is not None and span_s < PASS_UPDATES_MIN * period:
        bad.append(
            f"the pass ({span_s:.1f} s) holds fewer than {PASS_UPDATES_MIN} counter updates ({period:.2f} s each)"
        )
    return PassEnergy(joules, span_s, samples_j, coverage, "; ".join(why), "; ".join(bad))
