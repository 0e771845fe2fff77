"""The conditions a run's figures were measured under, as one record (run.json `conditions`), and the
stated rules for when they were bad during a run or differed between two runs (issue 41). Pure.

What moves a figure between runs and is in no interval over one run's samples: this host's load (other
processes' CPU, the load average: host_load.py), and a phone's or board's state at the start (its
temperature and Android's thermal status, from its first sample's snapshot). Every view of the report
and `compare` read `problems` and `differences`; docs/conditions.md states the rules."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .android import THERMAL_STATUS_NAMES
from .host_load import HostLoad

# The rules (docs/conditions.md, "Conditions of a run")
LOADED_CORES = 0.5  # other processes' mean CPU above half a core during a run: the run was loaded
DIFFER_CORES = 0.25  # two runs whose other-process CPU differs by more than a quarter core differ
HOT_START_C = 45.0  # a device at or above this at its first sample started hot
THROTTLED_STATUS = 2  # Android's thermal status "moderate" or worse at the start: throttling
DIFFER_START_C = 5.0  # two runs whose start temperatures differ by more than this differ


def _num(data: Mapping[str, Any], key: str) -> float | None:
    v = data.get(key)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


@dataclass(frozen=True)
class DeviceStart:
    """A device's state before its run: its background CPU in cores and load average (phones and boards:
    host_load.START_PROBE in its info, before the runner starts), the hottest reading (thermal zone or
    battery), the battery's temperature and Android's thermal status (its first sample's snapshot)."""

    temp_c: float | None = None
    battery_temp_c: float | None = None
    thermal_status: int | None = None
    background_cores: float | None = None
    load1: float | None = None

    @classmethod
    def of(
        cls, snapshot: Mapping[str, Any] | None, info: Mapping[str, Any] | None = None
    ) -> DeviceStart | None:
        """From a row's `thermal_before` (driver hook on phones, android_runner/thermal.py elsewhere) and
        the device's info `extra` (background_cores, load1)."""
        snap = snapshot if isinstance(snapshot, Mapping) else {}
        extra = info if isinstance(info, Mapping) else {}
        temps = [t for t in (_num(snap, "max_temp_c"), _num(snap, "battery_temp_c")) if t is not None]
        status = snap.get("thermal_status")
        start = cls(max(temps) if temps else None, _num(snap, "battery_temp_c"),
                    status if isinstance(status, int) and not isinstance(status, bool) else None,
                    _num(extra, "background_cores"), _num(extra, "load1"))  # fmt: skip
        return start if start != cls() else None

    def to_dict(self) -> dict[str, Any]:
        return {"temp_c": self.temp_c, "battery_temp_c": self.battery_temp_c, "thermal_status": self.thermal_status,
                "background_cores": self.background_cores, "load1": self.load1}  # fmt: skip

    @classmethod
    def from_dict(cls, data: Any) -> DeviceStart | None:
        if not isinstance(data, Mapping):
            return None
        status = data.get("thermal_status")
        return cls(_num(data, "temp_c"), _num(data, "battery_temp_c"), status if isinstance(status, int) else None,
                   _num(data, "background_cores"), _num(data, "load1"))  # fmt: skip

    @property
    def status_name(self) -> str:
        s = self.thermal_status
        return THERMAL_STATUS_NAMES[s] if s is not None and 0 <= s < len(THERMAL_STATUS_NAMES) else ""

    def text(self) -> str:
        """`background CPU 0.12 cores, load average 3.1, 38.5 °C, thermal status light (1)` at the start."""
        parts = [f"background CPU {self.background_cores:.2f} cores" if self.background_cores is not None else "",
                 f"load average {self.load1:.1f}" if self.load1 is not None else "",
                 f"{self.temp_c:.1f} °C" if self.temp_c is not None else ""]  # fmt: skip
        if self.thermal_status is not None:
            parts.append(f"thermal status {self.status_name or '?'} ({self.thermal_status})")
        return ", ".join(p for p in parts if p) or "not read"


@dataclass(frozen=True)
class DeviceConditions:
    """One device's conditions: this host's load while its runner ran here (a `kind: local` device), its
    state at the start."""

    host: HostLoad | None = None
    start: DeviceStart | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"host": None if self.host is None else self.host.to_dict(),
                "start": None if self.start is None else self.start.to_dict()}  # fmt: skip

    @classmethod
    def from_dict(cls, data: Any) -> DeviceConditions:
        d = data if isinstance(data, Mapping) else {}
        return cls(HostLoad.from_dict(d.get("host")), DeviceStart.from_dict(d.get("start")))


@dataclass(frozen=True)
class RunConditions:
    """run.json `conditions`: this host over the whole run, and each device's."""

    host: HostLoad | None = None
    devices: Mapping[str, DeviceConditions] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"host": None if self.host is None else self.host.to_dict(),
                "devices": {n: d.to_dict() for n, d in self.devices.items()},
                "rules": RULES}  # fmt: skip

    @classmethod
    def from_dict(cls, data: Any) -> RunConditions | None:
        """run.json's `conditions`; None for a run that did not record them (an older edgefarm)."""
        if not isinstance(data, Mapping):
            return None
        devices = data.get("devices") if isinstance(data.get("devices"), Mapping) else {}
        return cls(HostLoad.from_dict(data.get("host")),
                   {str(n): DeviceConditions.from_dict(d) for n, d in devices.items()})  # fmt: skip

    @property
    def _per_device(self) -> bool:
        """Each device's own host load tells more than the run's: several devices ran on this host."""
        return sum(d.host is not None for d in self.devices.values()) > 1

    def lines(self) -> list[str]:
        """The conditions in words, one line for the host and one per device that has any."""
        out = [f"this host: {self.host.text()}"] if self.host is not None else []
        for name, d in self.devices.items():
            host = (
                [f"its host while it ran: {d.host.text()}"] if d.host is not None and self._per_device else []
            )
            parts = host + ([f"at its start {d.start.text()}"] if d.start is not None else [])
            if parts:
                out.append(f"{name}: " + "; ".join(parts))
        return out

    def problems(self) -> list[str]:
        """What was bad during the run, each with the rule it broke."""
        out = []
        slowed = (
            f"(over {LOADED_CORES} is loaded): the figures of the devices run on that host are slowed by it"
        )
        windows = {n: d.host.other_cores_mean for n, d in self.devices.items()
                   if self._per_device and d.host is not None and d.host.other_cores_mean is not None}  # fmt: skip
        run = self.host.other_cores_mean if self.host is not None else None
        if run is not None and run > LOADED_CORES:  # one line, each device's own window in it
            each = ", ".join(f"{n} {c:.2f}" for n, c in windows.items())
            out.append(f"LOADED: this host: other processes used {run:.2f} cores on average"
                       + (f" (while each device ran: {each})" if each else "") + f" {slowed}")  # fmt: skip
        else:  # a device whose own running time was loaded, the run as a whole not
            out += [f"LOADED: the host while {n} ran: other processes used {c:.2f} cores on average {slowed}"
                    for n, c in windows.items() if c > LOADED_CORES]  # fmt: skip
        for name, d in self.devices.items():
            s = d.start
            if s is None:
                continue
            if s.thermal_status is not None and s.thermal_status >= THROTTLED_STATUS:
                out.append(f"THROTTLED: {name} started at thermal status {s.status_name} ({s.thermal_status}; "
                           f"{THERMAL_STATUS_NAMES[THROTTLED_STATUS]} or worse is throttling)")  # fmt: skip
            if s.background_cores is not None and s.background_cores > LOADED_CORES:
                out.append(f"BUSY: {name}: other processes used {s.background_cores:.2f} cores just before its run "
                           f"(over {LOADED_CORES} is loaded)")  # fmt: skip
            if s.temp_c is not None and s.temp_c >= HOT_START_C:
                out.append(f"HOT: {name} started at {s.temp_c:.1f} °C ({HOT_START_C:.0f} °C or more is hot)")
        return out


RULES = (
    f"loaded: other processes' mean CPU over {LOADED_CORES} cores (this host over the run; busy: a phone's or "
    f"board's just before its run); runs differ: by more than {DIFFER_CORES} cores, or one loaded; a device "
    f"started hot at {HOT_START_C:.0f} °C or more, throttled at thermal status "
    f"{THERMAL_STATUS_NAMES[THROTTLED_STATUS]} or worse; start temperatures differ by more than {DIFFER_START_C:.0f} °C"
)


def _cores(load: HostLoad | None) -> float | None:
    return None if load is None else load.other_cores_mean


def differences(a: RunConditions | None, b: RunConditions | None, names: Sequence[str]) -> list[str]:
    """How the conditions of two runs (named `names`) differ, by the rules: the host's other-process CPU
    (the whole run's, and each device's while it ran), a device's start temperature and thermal status;
    a run that recorded none is said."""
    if a is None or b is None:
        missing = [n for n, c in zip(names, (a, b), strict=True) if c is None]
        return [
            f"conditions not recorded in {' and '.join(missing)} (an older edgefarm): cannot say whether they differed"
        ]
    out = []
    pairs = [("this host", a.host, b.host)] + [
        (f"the host while {n} ran", a.devices[n].host, b.devices[n].host)
        for n in a.devices if n in b.devices
    ]  # fmt: skip
    for where, x, y in pairs:
        cx, cy = _cores(x), _cores(y)
        if cx is None or cy is None:
            continue
        loaded = [cx > LOADED_CORES, cy > LOADED_CORES]
        if abs(cx - cy) > DIFFER_CORES or loaded[0] != loaded[1]:
            tag = [" (loaded)" if f else "" for f in loaded]
            out.append(
                f"{where}: other processes {cx:.2f} cores{tag[0]} in {names[0]}, {cy:.2f}{tag[1]} in {names[1]}"
            )
    for n in a.devices:
        if n not in b.devices:
            continue
        x, y = a.devices[n].start, b.devices[n].start
        if x is None or y is None:
            continue
        if x.temp_c is not None and y.temp_c is not None and abs(x.temp_c - y.temp_c) > DIFFER_START_C:
            out.append(f"{n}: started at {x.temp_c:.1f} °C in {names[0]}, {y.temp_c:.1f} °C in {names[1]}")
        bx, by = x.background_cores, y.background_cores
        if (
            bx is not None
            and by is not None
            and (abs(bx - by) > DIFFER_CORES or (bx > LOADED_CORES) != (by > LOADED_CORES))
        ):
            out.append(f"{n}: background CPU at start {bx:.2f} cores in {names[0]}, {by:.2f} in {names[1]}")
        if x.thermal_status != y.thermal_status and None not in (x.thermal_status, y.thermal_status):
            out.append(
                f"{n}: thermal status at start {x.status_name} in {names[0]}, {y.status_name} in {names[1]}"
            )
    return out


def merged(parts: Sequence[tuple[RunConditions | None, Mapping[str, str]]]) -> RunConditions | None:
    """The conditions of runs merged into one report (`report --merge`), from each run's conditions and
    its device names in the merge: each device keeps its own, its controller's host load as its host's
    (several controllers have no one "this host"); None when no run recorded any."""
    devices: dict[str, DeviceConditions] = {}
    for conditions, names in parts:
        if conditions is None:
            continue
        for name, merged_name in names.items():
            own = conditions.devices.get(name, DeviceConditions())
            devices[merged_name] = DeviceConditions(own.host or conditions.host, own.start)
    return RunConditions(None, devices) if devices else None


def findings(a: RunConditions | None, b: RunConditions | None, names: Sequence[str]) -> list[str]:
    """What `compare` says of two runs' conditions: how they differed, then what was bad during each."""
    out = differences(a, b, names)
    for name, c in zip(names, (a, b), strict=True):
        out += [f"during {name}: {p}" for p in (c.problems() if c is not None else [])]
    return out
