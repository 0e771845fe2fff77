"""The driver hook's per-sample snapshot files (`driver.sh hook`): battery, thermal, cooldown wait.

Both phone runners (native and upstream) leave the same files in `samples/<n>/`; this reads them
into the row's thermal fields. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..telemetry import android as tel

SNAPSHOT_FILES = ("battery_before", "battery_after", "thermal_before", "thermal_after", "cooldown_ms")


def thermal_of(files: Mapping[str, str], phase: str) -> dict[str, Any] | None:
    """`dumpsys battery` / `dumpsys thermalservice` captured before or after a sample."""
    battery_text, thermal_text = files.get(f"battery_{phase}", ""), files.get(f"thermal_{phase}", "")
    if not battery_text and not thermal_text:
        return None
    b, t = tel.parse_battery(battery_text), tel.parse_thermal(thermal_text)
    return {"battery_temp_c": b.temperature_c, "battery_pct": b.level_pct, "thermal_status": t.status,
            "max_temp_c": t.max_temp_c}  # fmt: skip


def cooldown_s(files: Mapping[str, str]) -> float | None:
    """The hook's `cooldown_ms` file: milliseconds waited, absent when no cooldown was asked."""
    text = files.get("cooldown_ms", "").strip()
    return int(text) / 1000.0 if text.isdigit() else None
