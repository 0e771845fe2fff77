"""What a phone says about a SIGKILL: the memory it had and the low-memory killer's record.

A SIGKILL is `oom` only with evidence (android_runner/status.py): the kernel's or lmkd's record of
the kill, or a peak near the memory the phone had. The host reads the phone's MemAvailable when a
run starts (in the driver's one call before the runner) and, only after a SIGKILL, the low-memory
killer's lines that name the runner's pid.
"""

from __future__ import annotations

import re

from android_runner.status import OOM_RECORD

from ..devices.base import Device
from ..errors import DeviceError
from ..telemetry.android import parse_meminfo

# Android's low-memory killer logs each kill to the main log under the tag lowmemorykiller (lmkd.cpp,
# `Kill '%s' (%d), uid %d, oom_score_adj %d to free %ldkB rss, ...`; real captures:
# tests/unit/fixtures/real/lmkd_*.txt). `-d`: dump and exit; `-s TAG...`: only those tags.
LMKD_LOG = ("logcat", "-d", "-s", "lowmemorykiller", "lmkd")


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


def kill_records(device: Device, pid: int) -> str:
    """The phone's low-memory killer records naming the runner's pid (`logcat`, one call, only after a
    SIGKILL); "" when there are none or logcat cannot be read (the row then says no evidence)."""
    lines: list[str] = []
    try:
        device.run(list(LMKD_LOG), timeout_s=30, on_line=lines.append)
    except DeviceError:
        return ""
    return records_naming("\n".join(lines), pid)
