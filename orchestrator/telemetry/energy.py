"""Energy per sample and per generated token from a device's power readings (pure).

Devices report RAW sums (android_runner/native/edgefarm_runner.c, driver.sh's upstream loop,
android_runner/power.py on boards); every unit and sign decision is made here, once:

- phones (`/sys/class/power_supply/battery`): `current_now` (instantaneous) or `current_avg`
  (the fuel gauge's own moving average), in uA by the kernel's ABI but mA on some vendors;
  `voltage_now` in uV (mV on some vendors). The unit is told by magnitude: a phone running a
  model draws 10 mA..10 A, so |I| >= 10,000 is uA, smaller is mA; |V| >= 100,000 is uV, >= 100 mV.
  Sign: discharge is negative on some vendors (Pixels) and positive on others (Samsung, most
  Qualcomm), so the integral's magnitude is the energy; a series with BOTH signs means the
  charger fed part of the load, and the row is marked unreliable, as is any row taken while the
  battery reported Charging/Full.
- boards: hwmon `power*_input` (uW) or a Pi 5's PMIC rails (`vcgencmd pmic_read_adc`, V*A per
  rail, summed), reported as a power integral in uW*s.

No idle baseline is subtracted: the figure is the whole device's energy while the sample ran
(screen, radios and other apps included). docs/energy.md states the method and its limits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

MICRO_CURRENT_MIN = 10_000.0  # |I| at or above this is uA, below is mA
MICRO_VOLTAGE_MIN = 100_000.0  # |V| at or above this is uV
MILLI_VOLTAGE_MIN = 100.0  # |V| at or above this (and below uV) is mV, else V


@dataclass(frozen=True)
class PowerReading:
    """Raw sums a device reports for one sample (units as the device's files give them).

    kind "iv": `integral` = sum of I*V*dt (raw current x raw voltage x seconds), with the mean raw
    current and voltage to tell the units; kind "p_uw": `integral` = sum of P*dt in uW*s.
    `positive`/`negative` count readings by the sign of the current (kind "iv").
    """

    kind: str  # iv | p_uw
    integral: float
    samples: int
    duration_s: float
    source: str  # e.g. sysfs:current_now, sysfs:current_avg, hwmon, pmic
    current_mean: float = 0.0
    voltage_mean: float = 0.0
    positive: int = 0
    negative: int = 0
    charging: bool | None = None


@dataclass(frozen=True)
class Energy:
    energy_j: float
    mean_power_w: float
    samples: int
    duration_s: float
    source: str
    unreliable: str = ""  # why the figure cannot be trusted ("" when it can)


def current_scale_a(current_mean_raw: float) -> float:
    """Amperes per raw current unit: uA (1e-6) or mA (1e-3), told by magnitude."""
    return 1e-6 if abs(current_mean_raw) >= MICRO_CURRENT_MIN else 1e-3


def voltage_scale_v(voltage_mean_raw: float) -> float:
    """Volts per raw voltage unit: uV, mV or V, told by magnitude."""
    v = abs(voltage_mean_raw)
    return 1e-6 if v >= MICRO_VOLTAGE_MIN else 1e-3 if v >= MILLI_VOLTAGE_MIN else 1.0


def energy_of(reading: PowerReading) -> Energy | None:
    """Joules of one sample, or None when nothing usable was read (never a made-up 0)."""
    if reading.samples < 2 or reading.duration_s <= 0:
        return None
    if reading.kind == "p_uw":
        joules = abs(reading.integral) * 1e-6
    elif reading.kind == "iv":
        if reading.voltage_mean == 0 or reading.current_mean == 0:
            return None
        scale = current_scale_a(reading.current_mean) * voltage_scale_v(reading.voltage_mean)
        joules = abs(reading.integral) * scale
    else:
        return None
    why = []
    if reading.charging:
        why.append("charging during the sample")
    if reading.positive and reading.negative:
        why.append(f"battery current changed sign ({reading.positive} vs {reading.negative} readings)")
    return Energy(
        energy_j=joules,
        mean_power_w=joules / reading.duration_s,
        samples=reading.samples,
        duration_s=reading.duration_s,
        source=reading.source,
        unreliable="; ".join(why),
    )


def reading_from_json(d: Any) -> PowerReading | None:
    """A device's `power` record (as the runners write it) -> PowerReading; None when absent/odd."""
    if not isinstance(d, Mapping):
        return None
    try:
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
        )
    except (KeyError, TypeError, ValueError):
        return None


def reading_from_series(
    series: Sequence[tuple[float, float, float]], *, source: str, charging: bool | None = None
) -> PowerReading | None:
    """(t_s, current_raw, voltage_raw) readings -> the same sums a runner reports (trapezoid rule)."""
    pts = sorted((float(t), float(i), float(v)) for t, i, v in series)
    if len(pts) < 2:
        return None
    integral = sum((t1 - t0) * (i0 * v0 + i1 * v1) / 2.0 for (t0, i0, v0), (t1, i1, v1) in pairwise(pts))
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
    )


def energy_fields(power: Any, generated_tokens: int | None) -> dict[str, Any]:
    """The row's energy fields from its raw `power` record (all None when not measured)."""
    energy = energy_of(power) if isinstance(power, PowerReading) else energy_of_json(power)
    if energy is None:
        return {"energy_j": None, "energy_mj_per_token": None, "power_source": "", "energy_unreliable": ""}
    per_token = energy.energy_j * 1000.0 / generated_tokens if generated_tokens else None
    return {
        "energy_j": round(energy.energy_j, 6),
        "energy_mj_per_token": None if per_token is None else round(per_token, 4),
        "power_source": energy.source,
        "energy_unreliable": energy.unreliable,
    }


def energy_of_json(d: Any) -> Energy | None:
    reading = reading_from_json(d)
    return None if reading is None else energy_of(reading)


def parse_power_tsv(text: str) -> PowerReading | None:
    """driver.sh's per-sample `power.tsv` (upstream runner): a `source current_now` line, then
    `centiseconds<TAB>current<TAB>voltage<TAB>status` rows -> the sample's PowerReading."""
    source, series, charging = "", [], False
    for line in text.splitlines():
        cells = line.split()
        if len(cells) == 2 and cells[0] == "source":
            source = f"sysfs:{cells[1]}"
            continue
        if len(cells) < 3:
            continue
        try:
            series.append((int(cells[0]) / 100.0, float(cells[1]), float(cells[2])))
        except ValueError:
            continue
        if len(cells) > 3 and cells[3] in ("Charging", "Full"):
            charging = True
    return reading_from_series(series, source=source or "sysfs", charging=charging)


def reading_to_json(r: PowerReading | None) -> dict[str, Any] | None:
    """The `power` record a runner writes, for a reading the host built from a series."""
    if r is None:
        return None
    return {"kind": r.kind, "integral": r.integral, "n": r.samples, "dt_s": round(r.duration_s, 6),
            "i_mean": r.current_mean, "v_mean": r.voltage_mean, "pos": r.positive, "neg": r.negative,
            "charging": None if r.charging is None else int(r.charging), "src": r.source}  # fmt: skip
