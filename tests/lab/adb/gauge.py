"""The lab phones' fuel gauges: a current that follows the phone's real CPU use, published like a real gauge.

Each 0.1 s one lab-wide thread reads the CPU time (utime + stime, /proc/<pid>/stat) of every process
of each gauged phone (the sessions its adb shells run in: the driver, the runner, its hooks) and
sets that phone's true load: `base_a + amps_per_cpu x CPU-seconds per second`. Every `period_s`
(0.25-1 s on real gauges) the gauge publishes the MEAN battery current over its last period, as
real gauges do, into the phone's /sys/class/power_supply/battery (current_now or current_avg,
voltage_now, status, charge_counter) and its `dumpsys battery` text (Charge counter, status,
AC/USB powered, and `current now` on a Samsung-like phone). Between refreshes nothing changes.

The truth is logged: cumulative load energy and battery charge at each 0.1 s tick, on CLOCK_BOOTTIME
(the clock of /proc/uptime, which the lab's `dumpsys` logs its calls with), so a test integrates the
load exactly over any window. Supplies: "battery" (the battery feeds the load), "usb-bypass" (USB
powered, `Not charging`: the charger feeds the load and the battery gives ~5 mA) and "charging"
(AC powered, `Charging`: the battery takes `charge_a` minus the load).

A phone may also get a thermal model (`ThermalSpec`): its CPU temperature rises with the same CPU
time and relaxes towards ambient; past each threshold the governor steps the clock down
(/sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq) and `dumpsys thermalservice` reports a
higher status, and the phone's processes really run slower: they are stopped for the share of every
5 ms the lower clock takes away (SIGSTOP/SIGCONT), so the runtime's own speed figures fall.
"""

from __future__ import annotations

import bisect
import os
import re
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

TICK_S = 0.1
CLK_TCK = os.sysconf("SC_CLK_TCK")
STATUS = {"battery": ("Discharging", 3), "usb-bypass": ("Not charging", 4), "charging": ("Charging", 2)}


def boottime() -> float:
    return time.clock_gettime(time.CLOCK_BOOTTIME)


@dataclass(frozen=True)
class GaugeSpec:
    period_s: float
    file: str = "current_now"  # current_now | current_avg | "" (sysfs closed: `dumpsys battery` only)
    amps_per_unit: float = 1e-6  # uA by the kernel's ABI; 1e-3 for a vendor in mA
    volts_per_unit: float = 1e-6
    discharge_sign: int = -1  # Pixels: discharge negative; Samsung, most Qualcomm: positive
    supply: str = "battery"  # battery | usb-bypass | charging
    base_a: float = 0.30  # screen, radios, idle SoC
    amps_per_cpu: float = 1.2  # per CPU-second per second of the phone's processes
    bypass_a: float = 0.005  # usb-bypass: what the battery still gives
    charge_a: float = 1.8  # charging: what the charger pushes


@dataclass(frozen=True)
class ThermalSpec:
    ambient_c: float = 30.0
    heat_c_per_cpu_s: float = 6.0  # degrees per CPU-second of the phone's processes
    tau_s: float = 60.0  # relaxation towards ambient
    max_khz: int = 2_910_000
    steps: tuple[tuple[float, int, int], ...] = (
        (34.0, 2_000_000, 1),
        (38.0, 1_200_000, 2),
    )  # (above C, kHz, status)
    # past this temperature the phone's OS stops the runner for heat (SIGKILL, once), as a vendor's
    # thermal daemon does at severe status; None: never
    stop_above: float | None = None


def _cpu_by_session() -> dict[int, dict[int, float]]:
    """session id -> {pid: CPU seconds} for every process on the host."""
    out: dict[int, dict[int, float]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                text = f.read()
        except OSError:
            continue
        fields = text[text.rfind(b")") + 2 :].split()
        if len(fields) > 12:
            out.setdefault(int(fields[3]), {})[int(name)] = (int(fields[11]) + int(fields[12])) / CLK_TCK
    return out


class Gauge:
    """One phone's gauge: truth log, published state, files."""

    def __init__(self, spec: GaugeSpec, battery_dir: Path, dumpsys_file: Path, sessions: Callable[[], set[int]],
                 thermal: ThermalSpec | None = None, thermal_file: Path | None = None,
                 cpufreq_file: Path | None = None):  # fmt: skip
        self.spec = spec
        self.thermal = thermal
        self.thermal_file, self.cpufreq_file = thermal_file, cpufreq_file
        self.thermal_template = thermal_file.read_text() if thermal_file else ""
        self.temp_c = thermal.ambient_c if thermal else 0.0
        self.clock_ratio = 1.0  # the governor's clock / the top clock: the share of time the phone runs
        self.stopped_s = 0.0  # how long the governor has held the phone's processes stopped
        self.heat_kills: list[int] = []  # runner pids the phone's OS stopped for heat (ThermalSpec.stop_above)
        self.battery_dir = battery_dir
        self.dumpsys_file = dumpsys_file
        self.template = dumpsys_file.read_text()
        self.sessions = sessions
        self.seen: dict[int, float] = {}  # pid -> CPU seconds at the last tick
        t = boottime()
        self.t_last = t
        self.t_pub = t
        self.acc_q = self.acc_vq = 0.0  # battery charge (A*s) and volt-weighted charge since the last refresh
        self.energy_j = 0.0  # load energy since the start (the truth)
        self.charge_c = 0.0  # battery charge since the start (discharge positive)
        self.counter_uah = 3_000_000.0
        self.log_t = [t]
        self.log_e = [0.0]
        self.log_q = [0.0]
        self.refreshes = 0
        self.publish(self.spec.base_a, self._volts(self.spec.base_a))

    def _volts(self, load_a: float) -> float:
        return 3.88 - 0.06 * load_a  # the cell's voltage sags under load

    def _battery_a(self, load_a: float) -> float:
        if self.spec.supply == "usb-bypass":
            return self.spec.bypass_a
        if self.spec.supply == "charging":
            return load_a - self.spec.charge_a  # negative: into the battery
        return load_a

    def tick(self, t: float, cpu: dict[int, dict[int, float]]) -> None:
        dt = t - self.t_last
        if dt <= 0:
            return
        used = 0.0
        now: dict[int, float] = {}
        for sid in self.sessions():
            for pid, sec in cpu.get(sid, {}).items():
                now[pid] = sec
                used += max(0.0, sec - self.seen.get(pid, 0.0))
        self.seen = now
        if self.thermal is not None:
            self._heat(used, dt)
        load = self.spec.base_a + self.spec.amps_per_cpu * used / dt
        volts = self._volts(load)
        batt = self._battery_a(load)
        self.energy_j += load * volts * dt
        self.charge_c += batt * dt
        self.acc_q += batt * dt
        self.acc_vq += volts * dt
        self.t_last = t
        self.log_t.append(t)
        self.log_e.append(self.energy_j)
        self.log_q.append(self.charge_c)
        if t - self.t_pub >= self.spec.period_s:
            span = t - self.t_pub
            self.counter_uah -= self.acc_q / 3600.0 * 1e6
            self.publish(self.acc_q / span, self.acc_vq / span)
            self.t_pub, self.acc_q, self.acc_vq = t, 0.0, 0.0

    def _heat(self, cpu_s: float, dt: float) -> None:
        th = self.thermal
        assert th is not None
        self.temp_c += cpu_s * th.heat_c_per_cpu_s - (self.temp_c - th.ambient_c) * dt / th.tau_s
        khz, status = th.max_khz, 0
        for above, step_khz, step_status in th.steps:
            if self.temp_c > above:
                khz, status = step_khz, step_status
        self.clock_ratio = khz / th.max_khz
        if self.cpufreq_file is not None:
            _write(self.cpufreq_file, f"{khz}\n")
            _write(self.cpufreq_file.with_name("scaling_max_freq"), f"{khz}\n")  # the governor's cap
        if self.thermal_file is not None:
            text = re.sub(r"Thermal Status: \d+", f"Thermal Status: {status}", self.thermal_template)
            text = re.sub(r"mValue=[-\d.]+(, mType=0,)", f"mValue={self.temp_c:.1f}\\1", text)
            _write(self.thermal_file, text)

    def publish(self, battery_a: float, volts: float) -> None:
        s = self.spec
        self.refreshes += 1
        alt = 1 if self.refreshes % 2 else -1
        jitter = alt * (1 if s.amps_per_unit >= 1e-3 else 37)  # a gauge's last bits: a new value each refresh
        raw_i = round(s.discharge_sign * battery_a / s.amps_per_unit) + jitter
        status, code = STATUS[s.supply]
        if s.file:
            files = {s.file: raw_i, "voltage_now": round(volts / s.volts_per_unit), "status": status,
                     "charge_counter": round(self.counter_uah)}  # fmt: skip
            for name, value in files.items():
                _write(self.battery_dir / name, f"{value}\n")
        values = {"ac powered": str(s.supply == "charging").lower(), "usb powered": str(s.supply == "usb-bypass").lower(),
                  "charge counter": str(round(self.counter_uah)), "status": str(code),
                  "voltage": str(round(volts * 1000)), "current now": str(round(-battery_a * 1000) + alt)}  # fmt: skip
        _write(self.dumpsys_file, _fill(self.template, values))

    def energy(self, a: float, b: float) -> float:
        """The load's exact energy (J) between two CLOCK_BOOTTIME instants."""
        return _at(self.log_t, self.log_e, b) - _at(self.log_t, self.log_e, a)

    def charge(self, a: float, b: float) -> float:
        return _at(self.log_t, self.log_q, b) - _at(self.log_t, self.log_q, a)


def _at(ts: list[float], vs: list[float], t: float) -> float:
    i = bisect.bisect_left(ts, t)
    if i <= 0:
        return vs[0]
    if i >= len(ts):
        return vs[-1]
    t0, t1 = ts[i - 1], ts[i]
    return vs[i - 1] + (vs[i] - vs[i - 1]) * (t - t0) / (t1 - t0)


def _fill(template: str, values: dict[str, str]) -> str:
    """`dumpsys battery` with the given keys' values replaced (their line kept as the phone prints it)."""
    out = []
    for line in template.splitlines():
        key = line.split(":", 1)[0].strip().lower()
        if ":" in line and key in values:
            line = re.sub(r":.*$", f": {values[key]}", line)
        out.append(line)
    return "\n".join(out) + "\n"


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


class GaugeBank:
    """The lab-wide thread ticking every gauge; runs only while a test uses gauges (cheap otherwise)."""

    def __init__(self) -> None:
        self.gauges: dict[str, Gauge] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="lab-gauges", daemon=True)
        self._governor = threading.Thread(target=self._govern, name="lab-governor", daemon=True)

    def start(self) -> GaugeBank:
        self._thread.start()
        if any(g.thermal for g in self.gauges.values()):
            self._governor.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        if self._governor.is_alive():
            self._governor.join(timeout=5)

    def _govern(self) -> None:
        """Every 5 ms, stop each throttled phone's processes for the share its lower clock takes away, and
        past ThermalSpec.stop_above SIGKILL its runner once (the OS stopping it for heat)."""
        period = 0.005
        while not self._stop.is_set():
            for g in self.gauges.values():
                th = g.thermal
                if th is not None and th.stop_above is not None and not g.heat_kills and g.temp_c > th.stop_above:
                    runners = [pid for pid in g.seen if _is_runner(pid)]
                    if runners:
                        g.heat_kills.extend(runners)
                        _signal(runners, signal.SIGKILL)
            slow = [g for g in self.gauges.values() if g.clock_ratio < 1.0]
            if not slow:
                time.sleep(period)
                continue
            off = min(1.0 - g.clock_ratio for g in slow) * period
            pids = [pid for g in slow for pid in g.seen]
            for g in slow:
                g.stopped_s += off
            _signal(pids, signal.SIGSTOP)
            time.sleep(off)
            _signal(pids, signal.SIGCONT)
            time.sleep(period - off)

    def _loop(self) -> None:
        while not self._stop.wait(TICK_S):
            cpu = _cpu_by_session()
            t = boottime()
            for g in list(self.gauges.values()):
                g.tick(t, cpu)


def _is_runner(pid: int) -> bool:
    """A phone process that is a model runner (the native runner or the upstream binary), not its driver
    (whose command line names the runner too)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read()
    except OSError:
        return False
    return (b"litert_lm_advanced_main" in cmd or b"edgefarm_runner" in cmd) and b"driver.sh" not in cmd


def _signal(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


class TemperatureScript:
    """A phone whose temperatures follow a script `curve(t) -> °C` (--settle's lab, docs/conditions.md):
    every 0.1 s the battery's `temperature:` (tenths, `dumpsys battery`) and every live HAL temperature
    of type CPU (0) or skin (3) in `dumpsys thermalservice` read the curve, the same value everywhere.
    t is 0 (the curve's start value) until the script starts: `start_when()` true (e.g. a job's settle
    gate began), then seconds since. Thermal status and clocks are left as the phone's files say."""

    def __init__(self, curve: Callable[[float], float], battery_file: Path, thermal_file: Path,
                 start_when: Callable[[], bool] = lambda: True) -> None:  # fmt: skip
        self.curve, self.start_when = curve, start_when
        self.battery_file, self.thermal_file = battery_file, thermal_file
        self.battery_template, self.thermal_template = battery_file.read_text(), thermal_file.read_text()
        self.t0: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="lab-temperature", daemon=True)

    def __enter__(self) -> TemperatureScript:
        self._write(self.curve(0.0))
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.battery_file.write_text(self.battery_template)
        self.thermal_file.write_text(self.thermal_template)

    def _loop(self) -> None:
        while not self._stop.wait(TICK_S):
            if self.t0 is None and self.start_when():
                self.t0 = time.monotonic()
            self._write(self.curve(0.0 if self.t0 is None else time.monotonic() - self.t0))

    def _write(self, temp_c: float) -> None:
        _write(self.battery_file, _fill(self.battery_template, {"temperature": str(round(temp_c * 10))}))
        text = re.sub(r"(Temperature\{mValue=)[-\d.]+(, mType=[03],)", lambda m: f"{m[1]}{temp_c:.2f}{m[2]}",
                      self.thermal_template.split("Current temperatures from HAL:")[1])  # fmt: skip
        _write(self.thermal_file, self.thermal_template.split("Current temperatures from HAL:")[0]
               + "Current temperatures from HAL:" + text)  # fmt: skip
