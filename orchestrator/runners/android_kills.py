"""What a phone says about a SIGKILL: the memory it had, the low-memory killer's record, its heat.

A SIGKILL is `oom` only with evidence (android_runner/status.py): the kernel's or lmkd's record of
the kill, or a peak near the memory the phone had; without it, `thermal_stop` when the phone's thermal
status was THERMAL_STOP_STATUS or worse at the kill (the OS stopped the runner for heat). The host reads
the phone's MemAvailable when a run starts (in the driver's one call before the runner) and, only after
a SIGKILL, in ONE call, the low-memory killer's lines that name the runner's pid and the thermal service.
"""

from __future__ import annotations

import re

from android_runner.status import OOM_RECORD, THERMAL_STOP_STATUS

from ..devices.base import Device
from ..errors import DeviceError
from ..telemetry.android import THERMAL_STATUS_NAMES, parse_meminfo, parse_thermal

# Android's low-memory killer logs each kill to the main log under the tag lowmemorykiller (lmkd.cpp,
# `Kill '%s' (%d), uid %d, oom_score_adj %d to free %ldkB rss, ...`; real captures:
# tests/unit/fixtures/real/lmkd_*.txt). `-d`: dump and exit; `-s TAG...`: only those tags.
LMKD_LOG = ("logcat", "-d", "-s", "lowmemorykiller", "lmkd")
_SPLIT = "EDGEFARM-KILL-EVIDENCE"  # between logcat's lines and dumpsys thermalservice's in the one call


def available_mb(meminfo: str) -> float | None:
    """MemAvailable in MB of a phone's /proc/meminfo text (its RAM, MemTotal, on a kernel without that
    line; None when it has neither): the memory a runner started then could have, for the kill cause.
    Pure; the driver reads the file in the shell call it makes before the runner starts."""
    info = parse_meminfo(meminfo)
    kb = info.get("MemAvailable", info.get("MemTotal"))
    return round(kb / 1024.0, 1) if kb else None


def records_naming(log_text: str, pid: int) -> str:
    """The kernel's or lmkd's kill records in log_text that name this pid (`Kill 'name' (PID)`,
    `Killed process PID (name)`), one per line; "" when none does. Pure."""
    names = re.compile(rf"\({pid}\)|\bprocess {pid}\b")
    return "\n".join(ln.strip() for ln in log_text.splitlines() if OOM_RECORD.search(ln) and names.search(ln))


def heat_words(thermal_text: str) -> str:
    """Heat evidence from a `dumpsys thermalservice` read just after a kill: the status in words when it
    is THERMAL_STOP_STATUS or worse, else "". Pure."""
    t = parse_thermal(thermal_text)
    if t.status is None or t.status < THERMAL_STOP_STATUS:
        return ""
    name = THERMAL_STATUS_NAMES[t.status] if t.status < len(THERMAL_STATUS_NAMES) else "?"
    hottest = f", hottest sensor {t.max_temp_c:.1f} C" if t.max_temp_c is not None else ""
    return f"the OS's thermal status was {t.status} ({name}) at the kill{hottest}"


def kill_evidence(device: Device, pid: int) -> tuple[str, str]:
    """(the low-memory killer's records naming the runner's pid, heat words) in ONE device call, only
    after a SIGKILL; ("", "") when the phone cannot say (the row then says no evidence)."""
    lines: list[str] = []
    script = f'{" ".join(LMKD_LOG)} 2>/dev/null; echo {_SPLIT}; dumpsys thermalservice 2>/dev/null; true'
    try:
        device.run(["sh", "-c", script], timeout_s=30, on_line=lines.append)
    except DeviceError:
        return "", ""
    cut = lines.index(_SPLIT) if _SPLIT in lines else len(lines)
    return records_naming("\n".join(lines[:cut]), pid), heat_words("\n".join(lines[cut + 1 :]))
