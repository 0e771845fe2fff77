"""Thermal state of a Linux board or host, read before and after each sample (stdlib only).

`/sys/class/thermal/thermal_zone*/temp` is in millidegrees C; zones may be absent (VMs) or
unreadable: then there is nothing to record, and the result says None rather than guessing.
Sensors and tools are looked up once per process (a glob and a PATH search before and after every
sample cost more than the readings); each snapshot only reads their values.
"""

from __future__ import annotations

import functools
import glob
import os
import re
import shutil
import time
from collections.abc import Callable
from typing import Any


@functools.cache
def _files(pattern: str) -> tuple[str, ...]:
    """The sysfs files matching pattern, found once per process (zones and CPUs do not come and go)."""
    return tuple(glob.glob(pattern))


def _read_int(path: str) -> int | None:
    """A sysfs integer, or None when the file is unreadable or holds something else."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return int(os.read(fd, 4096))
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)


def thermal_snapshot(root: str = "/sys/class/thermal") -> dict[str, float] | None:
    """{"max_temp_c": hottest zone, "zones": how many were read}, or None when no zone is readable."""
    temps = []
    for path in _files(f"{root}/thermal_zone*/temp"):
        milli = _read_int(path)
        if milli is not None and -40_000 < milli < 150_000:  # drop sentinel values of missing sensors
            temps.append(milli / 1000.0)
    if not temps:
        return None
    return {"max_temp_c": round(max(temps), 1), "zones": len(temps)}


def cool_down(
    limit_c: float,
    max_wait_s: float,
    *,
    read: Callable[[], dict[str, float] | None] = thermal_snapshot,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    poll_s: float = 1.0,
) -> tuple[float, bool] | None:
    """Wait until the hottest zone is at or below limit_c, at most max_wait_s.

    Returns (seconds waited, whether the limit was reached), or None when no sensor is readable
    (then nothing can be gated and the caller says so instead of pretending).
    """
    start = clock()
    while True:
        snap = read()
        if snap is None:
            return None
        waited = clock() - start
        if snap["max_temp_c"] <= limit_c:
            return round(waited, 3), True
        if waited >= max_wait_s:
            return round(waited, 3), False
        sleep(min(poll_s, max(0.0, max_wait_s - waited)))


def zone_temps(root: str = "/sys/class/thermal") -> dict[str, float]:
    """Every readable zone's temperature (°C), named by its `type` (a Pi's SoC is `cpu-thermal`), the
    zone's folder name added when two share a type."""
    out: dict[str, float] = {}
    for path in sorted(_files(f"{root}/thermal_zone*/temp")):
        milli = _read_int(path)
        if milli is None or not -40_000 < milli < 150_000:
            continue
        folder = os.path.dirname(path)
        try:
            with open(os.path.join(folder, "type"), encoding="utf-8", errors="replace") as f:
                name = f.read(64).strip() or os.path.basename(folder)
        except OSError:
            name = os.path.basename(folder)
        out[name if name not in out else f"{name}:{os.path.basename(folder)}"] = milli / 1000.0
    return out


def settle(
    limit_c: float,
    window_s: float,
    max_wait_s: float,
    *,
    read: Callable[[], dict[str, float]] = zone_temps,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Any]:
    """--settle (docs/conditions.md; the phone's twin is driver.sh settle_gate): poll every sensor (every
    window/5, 0.1-1 s) until each one changed less than limit_c over the last window_s, for at most
    max_wait_s. Returns the record's fields (android_runner/contract.py Settle); `settled` None when no
    sensor is readable."""
    poll = min(1.0, max(0.1, window_s / 5))
    start = clock()
    log: list[tuple[float, dict[str, float]]] = []
    span: float | None = None
    settled: bool | None = False
    while True:
        now = clock() - start
        temps = read()
        if not temps and not log:
            settled = None
            break
        log.append((now, temps))
        if now >= window_s:
            recent = [t for at, t in log if at >= now - window_s]
            names = {n for t in recent for n in t}
            span = max(max(t[n] for t in recent if n in t) - min(t[n] for t in recent if n in t) for n in names)
            if span < limit_c:
                settled = True
                break
        if now >= max_wait_s:
            break
        sleep(poll)
    return {"settled": settled, "waited_s": round(log[-1][0] if log else 0.0, 3), "limit_c": limit_c,
            "window_s": window_s, "max_wait_s": max_wait_s, "span_c": None if span is None else round(span, 3),
            "start_c": log[0][1] if log else {}, "end_c": log[-1][1] if log else {}}  # fmt: skip


VCGENCMD = ("measure_temp", "get_throttled", "measure_clock arm")  # a Pi's firmware view
_which = functools.cache(shutil.which)  # a tool's place, looked up once per process


def with_clocks(
    snap: dict[str, Any] | None, cpu_root: str = "/sys/devices/system/cpu"
) -> dict[str, Any] | None:
    """A thermal snapshot plus the CPU clock (highest core, MHz) and, on a Pi, vcgencmd's temperature,
    throttle bits (raw hex) and ARM clock. None when nothing at all is readable."""
    out: dict[str, Any] = dict(snap or {})
    freqs = map(_read_int, _files(f"{cpu_root}/cpu[0-9]*/cpufreq/scaling_cur_freq"))
    khz = [k for k in freqs if k is not None]
    if khz:
        out["cpu_mhz"] = round(max(khz) / 1000.0, 1)
    if _which("vcgencmd"):
        import subprocess  # only a Pi gets here: not imported at the runner's start, which a sample waits on

        for command in VCGENCMD:
            try:
                p = subprocess.run(
                    ["vcgencmd", *command.split()], capture_output=True, text=True, timeout=5, check=False
                )
            except (OSError, subprocess.SubprocessError):
                continue
            text = p.stdout if p.returncode == 0 else ""
            if m := re.search(r"temp=([\d.]+)", text):
                out["vc_temp_c"] = float(m.group(1))
            elif m := re.search(r"throttled=(0x[0-9a-fA-F]+)", text):
                out["throttled"] = m.group(1)
            elif m := re.search(r"frequency\(\d+\)=(\d+)", text):
                out["arm_mhz"] = round(int(m.group(1)) / 1e6, 1)
    return out or None
