"""The driver hook's per-sample snapshot files (`driver.sh hook`): battery, thermal, cooldown and settle waits.

Both phone runners (native and upstream) leave the same files in `samples/<n>/`; this reads them
into the row's thermal fields. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from android_runner.contract import Settle

from ..telemetry import android as tel
from ..telemetry.energy import PowerReading, reading_from_series, reading_to_json, with_battery

SNAPSHOT_FILES = ("battery_before", "battery_after", "thermal_before", "thermal_after", "cooldown_ms",
                  "cpufreq_after", "cpucap_after", "gpufreq_after", "settle")  # fmt: skip


def thermal_of(files: Mapping[str, str], phase: str) -> dict[str, Any] | None:
    """`dumpsys battery` / `dumpsys thermalservice` captured before or after a sample."""
    battery_text, thermal_text = files.get(f"battery_{phase}", ""), files.get(f"thermal_{phase}", "")
    if not battery_text and not thermal_text:
        return None
    b, t = tel.parse_battery(battery_text), tel.parse_thermal(thermal_text)
    out = {"battery_temp_c": b.temperature_c, "battery_pct": b.level_pct, "thermal_status": t.status,
           "max_temp_c": t.max_temp_c}  # fmt: skip
    clocks = {"cpu_mhz": clock_mhz(files.get(f"cpufreq_{phase}", ""), 1e-3),
              # the highest clock the governor allows now (scaling_max_freq): below the top, a cap
              "cpu_cap_mhz": clock_mhz(files.get(f"cpucap_{phase}", ""), 1e-3),
              "gpu_mhz": clock_mhz(files.get(f"gpufreq_{phase}", ""), 1e-6)}  # fmt: skip
    return out | {k: v for k, v in clocks.items() if v}


def clock_mhz(text: str, mhz_per_unit: float) -> float | None:
    """The highest clock in a `cat` of cpufreq `scaling_cur_freq` (kHz) or GPU clock files (Hz), MHz."""
    values = [int(w) for w in text.split() if w.isdigit()]
    return round(max(values) * mhz_per_unit, 1) if values else None


def dumpsys_power(files: Mapping[str, str], wall_ms: float | None) -> PowerReading | None:
    """Where the battery's sysfs folder is closed: the `current now` (else `current avg`) and voltage
    that some vendors print in `dumpsys battery`, before and after the sample, over its wall time.
    Two readings only: a coarse figure (docs/energy.md)."""
    before = tel.parse_battery(files.get("battery_before", ""))
    after = tel.parse_battery(files.get("battery_after", ""))
    key = "current_now" if before.current_now is not None and after.current_now is not None else "current_avg"
    i0, i1 = getattr(before, key), getattr(after, key)
    if i0 is None or i1 is None or not before.voltage_mv or not after.voltage_mv or not wall_ms:
        return None
    series = [(0.0, i0, float(before.voltage_mv)), (wall_ms / 1000.0, i1, float(after.voltage_mv))]
    charging = bool(before.charging or after.charging)
    reading = reading_from_series(series, source=f"dumpsys:{key.replace('_', ' ')}", charging=charging)
    return None if reading is None else replace(reading, t0_s=None)  # no device clock: the wall time only


def power_record(
    power: PowerReading | Mapping[str, Any] | None, files: Mapping[str, str]
) -> dict[str, Any] | None:
    """The row's `power` record: the device's raw sums plus what the hook's `dumpsys battery` showed
    around the sample (external power, the coulomb counter's change): energy.py decides trust from it."""
    raw = reading_to_json(power) if isinstance(power, PowerReading) else power
    return with_battery(raw, files.get("battery_before", ""), files.get("battery_after", ""))


def conditions(files: Mapping[str, str]) -> dict[str, Any]:
    """The row's condition fields from the hook's files: thermal state before and after, the cooldown
    and settle waits (both phone runners' rows take these alike)."""
    return {"thermal_before": thermal_of(files, "before"), "thermal_after": thermal_of(files, "after"),
            "cooldown_s": cooldown_s(files), "settle": settle_record(files.get("settle", ""))}  # fmt: skip


def settle_record(text: str) -> Settle | None:
    """The hook's `settle` file (driver.sh settle_gate): `key=value` lines, then `start|end NAME MILLI_C`;
    None when there is none (not the block's first sample, or no --settle) or it is cut short."""
    keys: dict[str, str] = {}
    temps: dict[str, dict[str, float]] = {"start": {}, "end": {}}
    for line in text.splitlines():
        key, eq, value = line.partition("=")
        words = line.split()
        if eq and " " not in key:
            keys[key] = value.strip()
        elif len(words) == 3 and words[0] in temps and words[2].lstrip("-").isdigit():
            temps[words[0]][words[1]] = int(words[2]) / 1000.0
    if not all(k in keys for k in ("settled", "waited_ms", "limit_mc", "window_ms", "max_ms")):
        return None

    def number(key: str) -> float | None:
        v = keys.get(key, "")
        return int(v) / 1000.0 if v.lstrip("-").isdigit() else None

    return Settle(settled=None if keys["settled"] == "" else keys["settled"] == "1", waited_s=number("waited_ms") or 0.0,
                  limit_c=number("limit_mc") or 0.0, window_s=number("window_ms") or 0.0,
                  max_wait_s=number("max_ms") or 0.0, span_c=number("span_mc"), start_c=temps["start"],
                  end_c=temps["end"])  # fmt: skip


def cooldown_s(files: Mapping[str, str]) -> float | None:
    """The hook's `cooldown_ms` file: milliseconds waited, absent when no cooldown was asked."""
    text = files.get("cooldown_ms", "").strip()
    return int(text) / 1000.0 if text.isdigit() else None
