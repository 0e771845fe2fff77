"""Energy per sample and per generated token from a device's power readings (pure).

Devices report RAW sums (android_runner/native/edgefarm_runner.c, driver.sh's upstream loop,
android_runner/power.py on boards); every unit, sign and trust decision is made here:

- phones (`/sys/class/power_supply/battery`): `current_now` (else `current_avg`) in uA by the
  kernel's ABI, `voltage_now` in uV (mV or V on some vendors: voltages 3-4.5 V never overlap, so
  the voltage unit is told by magnitude). The CURRENT's unit is decided ONCE per phone over its
  whole pass (`phone_gauge`): uA, unless the gauge's own coulomb counter (`Charge counter`, uAh by
  the health HAL's ABI, read by the driver's hook before and after each sample) proves mA. Never
  from one sample's magnitude: a USB-powered phone whose battery supplies 5 mA (5000 uA) must not
  read 5 A.
- the fuel gauge publishes a new value every 0.25-1 s (the average over its last period): a reading
  lags the load by about one period. The period is measured per phone from the distinct readings
  the runner saw; with it, each sample's integral is corrected for that lag (`lag_corrected`) and
  samples shorter than two periods are flagged.
- boards: hwmon `power*_input` (uW) or a Pi 5's PMIC rails (`vcgencmd pmic_read_adc`, V*A per
  rail, summed), reported as a power integral in uW*s (instantaneous sensors: no lag, no flags).

A flagged row keeps its figure (results.jsonl, report.json) with `energy_unreliable` saying why;
`energy_trusted` is the one predicate every table uses. No idle baseline is subtracted: the figure
is the whole device's energy while the sample ran. docs/energy.md states the method and limits.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import Any

from android_runner.contract import SampleResult

from . import android as tel

MICRO_VOLTAGE_MIN = 100_000.0  # |V| at or above this is uV
MILLI_VOLTAGE_MIN = 100.0  # |V| at or above this (and below uV) is mV, else V
UA, MA = 1e-6, 1e-3  # amperes per raw current unit
LOAD_MIN_A = 0.02  # a phone running a model draws more than this from its battery
COUNTER_MIN_UAH = 20.0  # the counter must drop this much over the pass to tell the current's unit
# dumpsys battery `status` (BatteryManager.BATTERY_STATUS_*): 2 charging, 4 not charging, 5 full
_EXTERNAL_STATUS = {2: "Charging", 4: "Not charging", 5: "Full"}


@dataclass(frozen=True)
class PowerReading:
    """Raw sums a device reports for one sample (units as the device's files give them).

    kind "iv": `integral` = sum of I*V*dt (raw current x raw voltage x seconds), with the mean raw
    current and voltage; `first`/`last` = the window's first and last raw I*V; `changes` = how often
    the current's value changed (the gauge published) and `change_span_s` the time from the first
    change to the last. kind "p_uw": `integral` = sum of P*dt in uW*s. `external` says why the
    phone was on external power ("" when not seen); `counter` = the gauge's coulomb counter before and
    after the sample (uAh); `t0_s` = the window's start on the device's clock (one clock per pass).
    """

    kind: str  # iv | p_uw
    integral: float
    samples: int
    duration_s: float
    source: str  # e.g. sysfs:current_now, sysfs:current_avg, dumpsys:current now, hwmon, pmic
    current_mean: float = 0.0
    voltage_mean: float = 0.0
    positive: int = 0
    negative: int = 0
    charging: bool | None = None
    first: float | None = None
    last: float | None = None
    changes: int | None = None
    change_span_s: float | None = None
    change_start_s: float = 0.0  # the first change, from the window's start
    external: str = ""
    counter: tuple[float, float] | None = None  # the coulomb counter before and after the sample, uAh
    t0_s: float | None = None


@dataclass(frozen=True)
class Gauge:
    """A phone's fuel gauge as its whole pass showed it: decided once, applied to every row."""

    amps_per_unit: float = UA
    unit_why: str = "the kernel's ABI (uA)"
    period_s: float | None = None  # the gauge's update period; None: not measurable
    period_why: str = ""


@dataclass(frozen=True)
class Energy:
    energy_j: float
    mean_power_w: float
    samples: int
    duration_s: float
    source: str
    unreliable: str = ""  # why the figure cannot be trusted ("" when it can)


def voltage_scale_v(voltage_mean_raw: float) -> float:
    """Volts per raw voltage unit: uV, mV or V, told by magnitude (3-4.5 V never overlap)."""
    v = abs(voltage_mean_raw)
    return 1e-6 if v >= MICRO_VOLTAGE_MIN else 1e-3 if v >= MILLI_VOLTAGE_MIN else 1.0


def energy_trusted(row: Any) -> bool:
    """THE predicate of every table and chart: the row has an energy figure and nothing flagged it."""
    return getattr(row, "energy_j", None) is not None and not getattr(row, "energy_unreliable", "")


# ---------------------------------------------------------------- one phone, decided once


def phone_gauge(readings: Sequence[PowerReading]) -> Gauge:
    """The current's unit and the gauge's update period from every sample of one phone's pass."""
    iv = [r for r in readings if r.kind == "iv" and r.samples >= 2 and r.duration_s > 0]
    return Gauge(*_current_unit(iv), *_update_period(iv))


def _current_unit(iv: Sequence[PowerReading]) -> tuple[float, str]:
    """uA by the ABI; mA only when the coulomb counter proves it: the raw current's mean over the
    samples against the counter's drop over the pass (first sample's start to last sample's end), or
    over the samples themselves where the readings carry no device clock (`dumpsys`)."""
    counted = [r for r in iv if r.counter is not None]
    if not counted:
        return UA, "the kernel's ABI (uA); no charge counter to confirm it"
    raw_mean = sum(r.current_mean * r.duration_s for r in counted) / sum(r.duration_s for r in counted)
    if all(r.t0_s is not None for r in counted):
        timed = sorted(counted, key=lambda r: r.t0_s or 0.0)
        drop_uah = (timed[0].counter or (0.0, 0.0))[0] - (timed[-1].counter or (0.0, 0.0))[1]
        span_s = (timed[-1].t0_s or 0.0) + timed[-1].duration_s - (timed[0].t0_s or 0.0)
    else:
        drop_uah = sum(c[0] - c[1] for r in counted if (c := r.counter))
        span_s = sum(r.duration_s for r in counted)
    if abs(drop_uah) < COUNTER_MIN_UAH or span_s <= 0:
        return (
            UA,
            f"the kernel's ABI (uA); the charge counter moved {abs(drop_uah):.0f} uAh, too little to confirm it",
        )
    ratio = abs(raw_mean) / (abs(drop_uah) * 3600.0 / span_s)  # raw units per uA
    if 0.3 <= ratio <= 3.0:
        return UA, f"uA, confirmed by the charge counter (ratio {ratio:.2f})"
    if 3e-4 <= ratio <= 3e-3:
        return MA, f"mA, shown by the charge counter (mean current / counter's = {ratio:.4f} of uA)"
    return UA, f"the kernel's ABI (uA); the charge counter disagrees with any unit (ratio {ratio:.3g})"


def _update_period(iv: Sequence[PowerReading]) -> tuple[float | None, str]:
    """Median time between the gauge's new values, over samples that saw at least two of them."""
    periods = [
        r.change_span_s / (r.changes - 1)
        for r in iv
        if r.changes is not None and r.changes >= 2 and r.change_span_s and r.change_span_s > 0
    ]
    if periods:
        return statistics.median(periods), f"measured over {len(periods)} sample(s)"
    still = max((r.duration_s for r in iv if r.changes == 0), default=0.0)
    return None, "no sample saw two gauge updates" + (f"; none at all in {still:.2f} s" if still else "")


# ---------------------------------------------------------------- one sample


def lag_corrected(reading: PowerReading, period_s: float | None) -> float:
    """The raw I*V*s over the sample, corrected for the gauge's lag of one period.

    The gauge's value during [t_k, t_k + P) is the mean over [t_k - P, t_k): the truth over the window
    [s, e] equals the integral of the held readings plus P x (last - first) reading, exactly when the
    load is steady before s and at the end of the window (derivation in docs/energy.md)."""
    if period_s is None or reading.first is None or reading.last is None:
        return reading.integral
    if reading.source.startswith("dumpsys"):  # two readings: the last one is a whole period of the load
        return reading.last * reading.duration_s
    return reading.integral + period_s * (reading.last - reading.first)


def energy_of(reading: PowerReading, gauge: Gauge | None = None) -> Energy | None:
    """Joules of one sample, or None when nothing usable was read (never a made-up 0)."""
    if reading.samples < 2 or reading.duration_s <= 0:
        return None
    why: list[str] = []
    if reading.kind == "p_uw":
        joules = abs(reading.integral) * 1e-6
    elif reading.kind == "iv":
        if reading.voltage_mean == 0 or reading.current_mean == 0:
            return None
        g = gauge or Gauge(period_why="decided over the phone's whole pass")
        volts = voltage_scale_v(reading.voltage_mean)
        joules = abs(lag_corrected(reading, g.period_s)) * g.amps_per_unit * volts
        why = _phone_flags(reading, g)
    else:
        return None
    return Energy(joules, joules / reading.duration_s, reading.samples, reading.duration_s, reading.source,
                  "; ".join(why))  # fmt: skip


def mean_current_ma(row: Any) -> float | None:
    """A phone row's mean battery current during the sample (mA), from its energy and the gauge's mean
    voltage (so in the unit and lag the phone's gauge was decided with); None without a current reading."""
    reading = reading_from_json(getattr(row, "power", None))
    energy = getattr(row, "energy_j", None)
    if reading is None or reading.kind != "iv" or not energy or not reading.voltage_mean or reading.duration_s <= 0:
        return None
    volts = abs(reading.voltage_mean) * voltage_scale_v(reading.voltage_mean)
    return round(energy / reading.duration_s / volts * 1000.0, 1)


def _phone_flags(r: PowerReading, g: Gauge) -> list[str]:
    why = []
    if r.charging or r.external:
        why.append(f"external power ({r.external or 'charging'}): the battery's current is not the load")
    if r.positive and r.negative:
        why.append(
            f"battery current changed sign ({r.positive} vs {r.negative} readings): a charger fed the load"
        )
    amps = abs(r.current_mean) * g.amps_per_unit
    if amps < LOAD_MIN_A:
        why.append(f"battery current {amps * 1000:.1f} mA is too small to be the load (unit: {g.unit_why}): "
                   "external power, or a gauge in another unit")  # fmt: skip
    if g.period_s is None:
        why.append(
            f"gauge update period unknown ({g.period_why}): the sample may be shorter than two updates"
        )
    elif r.duration_s < 2 * g.period_s:
        why.append(f"sample {r.duration_s:.2f} s is shorter than two gauge updates ({g.period_s:.2f} s each)")
    return why


# ---------------------------------------------------------------- records


def reading_from_json(d: Any) -> PowerReading | None:
    """A device's `power` record (as the runners write it) -> PowerReading; None when absent/odd."""
    if not isinstance(d, Mapping):
        return None
    try:
        ends = [d.get(k) for k in ("i0", "v0", "i1", "v1")]
        first = float(ends[0]) * float(ends[1]) if None not in ends else d.get("p0")
        last = float(ends[2]) * float(ends[3]) if None not in ends else d.get("p1")
        changes = d.get("changes")
        return PowerReading(
            kind=str(d.get("kind", "iv")),
            integral=float(d["integral"]),
            samples=int(d["n"]),
            duration_s=float(d["dt_s"]),
            source=str(d.get("src", "")),
            current_mean=float(d.get("i_mean", 0.0)),
            voltage_mean=float(d.get("v_mean", 0.0)),
            positive=int(d.get("pos", 0)),
            negative=int(d.get("neg", 0)),
            charging=None if d.get("charging") is None else bool(d.get("charging")),
            first=None if first is None else float(first),
            last=None if last is None else float(last),
            changes=None if changes is None else int(changes),
            change_span_s=float(d["t_ch1"]) - float(d["t_ch0"]) if "t_ch0" in d and "t_ch1" in d else None,
            change_start_s=float(d.get("t_ch0", 0.0)),
            external=str(d.get("external", "")),
            counter=(float(d["cc0"]), float(d["cc1"]))
            if d.get("cc0") is not None and d.get("cc1") is not None
            else None,
            t0_s=None if d.get("t0") is None else float(d["t0"]),
        )
    except (KeyError, TypeError, ValueError):
        return None


def reading_from_series(
    series: Sequence[tuple[float, float, float]],
    *,
    source: str,
    charging: bool | None = None,
    external: str = "",
) -> PowerReading | None:
    """(t_s, current_raw, voltage_raw) readings -> the same sums a runner reports (trapezoid rule)."""
    pts = sorted((float(t), float(i), float(v)) for t, i, v in series)
    if len(pts) < 2:
        return None
    integral = sum((t1 - t0) * (i0 * v0 + i1 * v1) / 2.0 for (t0, i0, v0), (t1, i1, v1) in pairwise(pts))
    moved = [b[0] for a, b in pairwise(pts) if b[1] != a[1]]
    return PowerReading(
        kind="iv",
        integral=integral,
        samples=len(pts),
        duration_s=pts[-1][0] - pts[0][0],
        source=source,
        current_mean=sum(p[1] for p in pts) / len(pts),
        voltage_mean=sum(p[2] for p in pts) / len(pts),
        positive=sum(1 for p in pts if p[1] > 0),
        negative=sum(1 for p in pts if p[1] < 0),
        charging=charging,
        first=pts[0][1] * pts[0][2],
        last=pts[-1][1] * pts[-1][2],
        changes=len(moved),
        change_span_s=moved[-1] - moved[0] if moved else 0.0,
        change_start_s=moved[0] - pts[0][0] if moved else 0.0,
        external=external,
        t0_s=pts[0][0],
    )


def reading_to_json(r: PowerReading | None) -> dict[str, Any] | None:
    """The `power` record a runner writes, for a reading the host built from a series."""
    if r is None:
        return None
    d = {"kind": r.kind, "integral": r.integral, "n": r.samples, "dt_s": round(r.duration_s, 6),
         "i_mean": r.current_mean, "v_mean": r.voltage_mean, "pos": r.positive, "neg": r.negative,
         "charging": None if r.charging is None else int(r.charging), "src": r.source}  # fmt: skip
    if r.first is not None and r.last is not None:  # the first and last raw I*V
        d.update(p0=r.first, p1=r.last)
    if r.changes is not None:
        t_ch0 = round(r.change_start_s, 6)
        d.update(changes=r.changes, t_ch0=t_ch0, t_ch1=round(t_ch0 + (r.change_span_s or 0.0), 6))
    if r.t0_s is not None:
        d["t0"] = r.t0_s
    if r.external:
        d["external"] = r.external
    return d


def with_battery(power: Mapping[str, Any] | None, before: str, after: str) -> dict[str, Any] | None:
    """The `power` record plus what the hook's `dumpsys battery` before and after the sample showed:
    external power (status Charging/Not charging/Full, AC/USB/wireless/dock powered) and the coulomb
    counter before and after (uAh)."""
    if power is None:
        return None
    b0, b1 = tel.parse_battery(before), tel.parse_battery(after)
    seen = []
    for b in (b0, b1):
        if b.status in _EXTERNAL_STATUS:
            seen.append(f"status {_EXTERNAL_STATUS[b.status]}")
        seen += [f"{name} powered" for name in b.powered]
    out = dict(power)
    if seen:
        out["external"] = ", ".join(dict.fromkeys([*filter(None, [str(power.get("external", ""))]), *seen]))
    if b0.charge_counter_uah is not None and b1.charge_counter_uah is not None:
        out.update(cc0=b0.charge_counter_uah, cc1=b1.charge_counter_uah)
    return out


def energy_fields(power: Any, generated_tokens: int | None, gauge: Gauge | None = None) -> dict[str, Any]:
    """The row's energy fields from its raw `power` record (all None when not measured)."""
    reading = power if isinstance(power, PowerReading) else reading_from_json(power)
    energy = None if reading is None else energy_of(reading, gauge)
    if energy is None:
        return {"energy_j": None, "energy_mj_per_token": None, "power_source": "", "energy_unreliable": ""}
    per_token = energy.energy_j * 1000.0 / generated_tokens if generated_tokens else None
    return {
        "energy_j": round(energy.energy_j, 6),
        "energy_mj_per_token": None if per_token is None else round(per_token, 4),
        "power_source": energy.source,
        "energy_unreliable": energy.unreliable,
    }


def settle(rows: Sequence[SampleResult]) -> list[SampleResult]:
    """One phone's rows with their energy decided by the phone's gauge (`phone_gauge` over all of them)."""
    readings = {r.id: reading_from_json(r.power) for r in rows}
    gauge = phone_gauge([x for x in readings.values() if x is not None])
    return [
        replace(r, **energy_fields(readings[r.id], r.decode_tokens, gauge))
        if readings[r.id] is not None
        else r
        for r in rows
    ]


def parse_power_tsv(text: str) -> PowerReading | None:
    """driver.sh's per-sample `power.tsv` (upstream runner): a `source current_now` line, then
    `centiseconds<TAB>current<TAB>voltage<TAB>status` rows -> the sample's PowerReading."""
    source, series, statuses = "", [], set()
    for line in text.splitlines():
        cells = line.split("\t") if "\t" in line else line.split()
        if len(cells) == 2 and cells[0] == "source":
            source = f"sysfs:{cells[1]}"
            continue
        if len(cells) < 3:
            continue
        try:
            series.append((int(cells[0]) / 100.0, float(cells[1]), float(cells[2])))
        except ValueError:
            continue
        if len(cells) > 3 and cells[3].strip() in ("Charging", "Full", "Not charging"):
            statuses.add(f"status {cells[3].strip()}")
    return reading_from_series(series, source=source or "sysfs", charging=bool(statuses),
                               external=", ".join(sorted(statuses)))  # fmt: skip
