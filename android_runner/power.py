"""Power draw of a Linux board while a sample runs: hwmon power sensors, or a Pi 5's PMIC (stdlib only).

- hwmon: every `/sys/class/hwmon/hwmon*/power*_input` (microwatts), summed (INA2xx/INA3221
  boards, some SBC power monitors). Read each tick (20 ms).
- Raspberry Pi 5: `vcgencmd pmic_read_adc` lists each PMIC rail's current (`X_A current(n)=..A`)
  and voltage (`X_V volt(n)=..V`); the board's draw is the sum of V*A over rails that have both.
  A subprocess per reading, so it is read every 200 ms. It misses what bypasses the PMIC (USB
  peripherals, the 5 V input's own losses).
The device reports a RAW integral in uW*s and the reading count; the host turns it into joules
(orchestrator/telemetry/energy.py). No sensor: no record (the row says not measured, never 0).
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import threading
import time
from collections.abc import Callable

HWMON_ROOT = "/sys/class/hwmon"
_RAIL = re.compile(r"^\s*(\S+)_([AV])\s+(?:current|volt)\(\d+\)=([-\d.]+)[AV]\s*$")


def parse_pmic_adc(text: str) -> float | None:
    """`vcgencmd pmic_read_adc` output -> total microwatts over rails with current and voltage."""
    amps: dict[str, float] = {}
    volts: dict[str, float] = {}
    for line in text.splitlines():
        m = _RAIL.match(line)
        if not m:
            continue
        (amps if m.group(2) == "A" else volts)[m.group(1)] = float(m.group(3))
    rails = [amps[k] * volts[k] for k in amps if k in volts]
    return sum(rails) * 1e6 if rails else None


def hwmon_files(root: str = HWMON_ROOT) -> list[str]:
    """Readable hwmon power inputs (uW) under root."""
    out = []
    for path in sorted(glob.glob(os.path.join(root, "*", "power*_input"))):
        try:
            with open(path, encoding="ascii") as f:
                int(f.read().strip())
        except (OSError, ValueError):
            continue
        out.append(path)
    return out


def _read_hwmon(files: list[str]) -> float | None:
    total, seen = 0.0, False
    for path in files:
        try:
            with open(path, encoding="ascii") as f:
                total += int(f.read().strip())
            seen = True
        except (OSError, ValueError):
            continue
    return total if seen else None


def _read_pmic() -> float | None:
    import subprocess  # only a Pi gets here: not imported at the runner's start, which a sample waits on

    try:
        p = subprocess.run(
            ["vcgencmd", "pmic_read_adc"], capture_output=True, text=True, timeout=2, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_pmic_adc(p.stdout) if p.returncode == 0 else None


def find_power_reader(root: str | None = None) -> tuple[str, Callable[[], float | None], float] | None:
    """(source, read microwatts, interval_s) for this board, or None when it has no power sensor."""
    files = hwmon_files(root or os.environ.get("EDGEFARM_HWMON_ROOT") or HWMON_ROOT)
    if files:
        return "hwmon", lambda: _read_hwmon(files), 0.02
    if shutil.which("vcgencmd") and _read_pmic() is not None:
        return "pmic", _read_pmic, 0.2
    return None


class PowerSampler:
    """A background thread integrating power (trapezoid, uW*s) between `reset()` and `reading()`."""

    def __init__(self, source: str, read: Callable[[], float | None], interval_s: float) -> None:
        self.source = source
        self._read = read
        self._interval_s = interval_s
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._on = False
        self._reset_state()

    def _reset_state(self) -> None:
        self._integral, self._n, self._t0, self._last = 0.0, 0, 0.0, None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="power-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Never raises."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)

    def reset(self) -> None:
        with self._lock:
            self._reset_state()
            self._on = True
        self.sample()

    def sample(self) -> None:
        uw = self._read()
        t = time.monotonic()
        if uw is None:
            return
        with self._lock:
            if not self._on:
                return
            if self._last is None:
                self._t0 = t
            else:
                t_prev, uw_prev = self._last
                self._integral += (t - t_prev) * (uw_prev + uw) / 2.0
            self._last = (t, uw)
            self._n += 1

    def reading(self) -> dict | None:
        """The sample's raw record (closes the window), or None when fewer than 2 readings."""
        self.sample()
        with self._lock:
            self._on = False
            if self._n < 2 or self._last is None:
                return None
            return {"kind": "p_uw", "integral": round(self._integral, 3), "n": self._n,
                    "dt_s": round(self._last[0] - self._t0, 6), "src": self.source}  # fmt: skip

    def _loop(self) -> None:
        while not self._stop.wait(self._interval_s):
            if self._on:
                self.sample()
