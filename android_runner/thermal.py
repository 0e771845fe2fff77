"""Thermal state of a Linux board or host, read before and after each sample (stdlib only).

`/sys/class/thermal/thermal_zone*/temp` is in millidegrees C; zones may be absent (VMs) or
unreadable: then there is nothing to record, and the result says None rather than guessing.
"""

from __future__ import annotations

import glob


def thermal_snapshot(root: str = "/sys/class/thermal") -> dict[str, float] | None:
    """{"max_temp_c": hottest zone, "zones": how many were read}, or None when no zone is readable."""
    temps = []
    for path in glob.glob(f"{root}/thermal_zone*/temp"):
        try:
            with open(path, encoding="ascii") as f:
                milli = int(f.read().strip())
        except (OSError, ValueError):
            continue
        if -40_000 < milli < 150_000:  # drop sentinel values of missing sensors
            temps.append(milli / 1000.0)
    if not temps:
        return None
    return {"max_temp_c": round(max(temps), 1), "zones": len(temps)}
