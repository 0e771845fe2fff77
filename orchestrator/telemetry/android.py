"""Pure parsers for what an Android phone says about itself over `adb shell`.

getprop, `dumpsys battery`, `dumpsys thermalservice`, /proc/meminfo, /proc/<pid>/status and `df`.
Vendors bend every one of these formats (see docs/notes on device telemetry), so each parser
reads only the fields it needs, tolerates the rest, and returns None for what is missing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# ---------------------------------------------------------------- getprop

_PROP = re.compile(r"^\[(?P<key>[^\]]+)\]:\s*\[(?P<value>.*)\]\s*$")


def parse_getprop(text: str) -> dict[str, str]:
    """`getprop` output (`[key]: [value]` lines; values may span lines) -> dict."""
    props: dict[str, str] = {}
    key: str | None = None
    buf: list[str] = []
    for raw in text.splitlines():
        line = raw.strip() if key is None else raw.rstrip()  # pasted/indented output (flutter#4009)
        m = _PROP.match(line)
        if m:
            props[m["key"]] = m["value"]
            key = None
            continue
        start = re.match(r"^\[(?P<key>[^\]]+)\]:\s*\[(?P<rest>.*)$", line)
        if start:  # a value with embedded newlines
            key, buf = start["key"], [start["rest"]]
            continue
        if key is not None:
            if line.endswith("]"):
                buf.append(line[:-1])
                props[key] = "\n".join(buf)
                key = None
            else:
                buf.append(line)
    return props


# Where vendors keep the SoC name, best first. ro.board.platform is a code name ("pineapple",
# "s5e9945"), still better than nothing.
SOC_KEYS = (
    "ro.soc.model",
    "ro.vendor.soc.model.external_name",
    "ro.vendor.soc.model",
    "ro.vendor.mediatek.platform",
    "ro.mediatek.platform",
    "ro.hardware.chipname",
    "ro.chipname",
    "ro.board.platform",
    "ro.hardware",
)


def soc_from_props(props: dict[str, str]) -> str:
    """The SoC name from whichever key this vendor fills in ("" when none)."""
    for key in SOC_KEYS:
        value = props.get(key, "").strip()
        if value:
            maker = props.get("ro.soc.manufacturer", "").strip() if key == "ro.soc.model" else ""
            if maker and not value.lower().startswith(maker.lower()):
                return f"{maker} {value}"
            return value
    return ""


# ---------------------------------------------------------------- dumpsys battery


@dataclass(frozen=True)
class Battery:
    level_pct: float | None = None
    temperature_c: float | None = None
    charging: bool | None = None
    plugged: str = ""  # ac | usb | wireless | "" (on battery)
    voltage_mv: int | None = None
    current_now: float | None = None  # raw, as the vendor prints it (mA or uA, either sign); few do
    current_avg: float | None = None
    status: int | None = None  # BatteryManager.BATTERY_STATUS_*: 2 charging, 3 discharging, 4 not charging, 5 full
    powered: tuple[str, ...] = ()  # every source that says `... powered: true` (ac, usb, wireless, dock)
    charge_counter_uah: float | None = None  # `Charge counter` (the gauge's coulomb counter, uAh by the HAL)


_BATTERY_STATUS_CHARGING = {2, 5}  # BATTERY_STATUS_CHARGING, BATTERY_STATUS_FULL


def _battery_fields(text: str) -> dict[str, str]:
    """First value per lower-cased key, from `key: value` lines (any indent), then `key=value`."""
    fields: dict[str, str] = {}
    late: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if ":" in line:
            key, _, value = line.partition(":")
            key = key.strip().lower()
            if key and key not in fields:
                fields[key] = value.strip()
        elif "=" in line:
            key, _, value = line.partition("=")
            late.setdefault(key.strip().lower(), value.strip())
    for key, value in late.items():
        fields.setdefault(key, value)
    return fields


def _num(value: str | None) -> float | None:
    if value is None:
        return None
    m = re.match(r"^\s*(-?\d+(?:\.\d+)?)", value)
    return float(m.group(1)) if m else None


def parse_battery(text: str) -> Battery:
    """`dumpsys battery` -> level, temperature (reported in 0.1 C), charging, plug."""
    f = _battery_fields(text)
    level = _num(f.get("level"))
    scale = _num(f.get("scale"))
    if level is not None and scale and scale != 100:
        level = round(level * 100.0 / scale, 1)
    temp = _num(f.get("temperature"))
    plugged = ""
    for name in ("ac", "usb", "wireless", "dock"):
        if f.get(f"{name} powered", "").lower() == "true":
            plugged = name
            break
    status = _num(f.get("status"))
    charging: bool | None
    if status is not None:
        charging = int(status) in _BATTERY_STATUS_CHARGING
    elif plugged or any(f"{n} powered" in f for n in ("ac", "usb")):
        charging = bool(plugged)
    else:
        charging = None
    voltage = _num(f.get("voltage"))
    return Battery(
        level_pct=level,
        temperature_c=None if temp is None else round(temp / 10.0, 1),
        charging=charging,
        plugged=plugged,
        voltage_mv=None if voltage is None else int(voltage),
        current_now=_num(f.get("current now")),
        current_avg=_num(f.get("current avg")),
        status=None if status is None else int(status),
        powered=tuple(n for n in ("ac", "usb", "wireless", "dock") if f.get(f"{n} powered", "").lower() == "true"),
        charge_counter_uah=_num(f.get("charge counter")),
    )


# ---------------------------------------------------------------- dumpsys thermalservice

# android.os.Temperature types that ARE temperatures; BCL_* (6-8) are voltages/currents/percent and
# TYPE_UNKNOWN (-1) is what some Pixels give their virtual sensors (battery percentage, power): only
# the types listed here count as temperatures, so a new or unknown type never becomes a max_temp_c.
TEMPERATURE_TYPES = {
    0: "cpu",
    1: "gpu",
    2: "battery",
    3: "skin",
    4: "usb_port",
    5: "power_amplifier",
    9: "npu",
    10: "tpu",
    11: "display",
    12: "modem",
    13: "soc",
    14: "wifi",
    15: "camera",
    16: "flashlight",
    17: "speaker",
    18: "ambient",
    19: "pogo",
}
NOT_TEMPERATURES = {6, 7, 8}  # BCL_VOLTAGE, BCL_CURRENT, BCL_PERCENTAGE
# Virtual sensors (Pixel/Tensor thermal HAL: VIRTUAL-USB-THROTTLING, VIRTUAL-USB-UI, VIRTUAL-QI-BATT...)
# are throttling states that read 0.0 while idle, or figures computed from the physical sensors (real:
# tests/unit/fixtures/real/thermal_tensor_virtual_usb_skia.txt): left out. VIRTUAL-SKIN (type SKIN)
# stays: it is the skin estimate Android's own thermal throttling reads.
VIRTUAL_PREFIX = "VIRTUAL-"
SKIN_TYPE = 3
THERMAL_STATUS_NAMES = ("none", "light", "moderate", "severe", "critical", "emergency", "shutdown")

_TEMP = re.compile(r"Temperature\{(?P<body>[^}]*)\}")
_KV = re.compile(r"(\w+)=([^,}]*)")


@dataclass(frozen=True)
class Thermal:
    status: int | None = None  # 0 none .. 6 shutdown
    hal_ready: bool | None = None
    temperatures_c: dict[str, float] = field(default_factory=dict)  # live HAL sensors only
    max_temp_c: float | None = None

    @property
    def status_name(self) -> str:
        if self.status is None or not 0 <= self.status < len(THERMAL_STATUS_NAMES):
            return ""
        return THERMAL_STATUS_NAMES[self.status]


def parse_thermal(text: str) -> Thermal:
    """`dumpsys thermalservice` -> status and the LIVE HAL temperatures (the cached block is stale)."""
    status = None
    m = re.search(r"^\s*Thermal Status:\s*(\d+)", text, re.MULTILINE)
    if m:
        status = int(m.group(1))
    hal_ready = None
    m = re.search(r"^\s*HAL Ready:\s*(\w+)", text, re.MULTILINE)
    if m:
        hal_ready = m.group(1).lower() == "true"
    temps: dict[str, float] = {}
    section = ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.endswith(":") and not stripped.startswith("Temperature{"):
            section = stripped.lower()
            continue
        if "current temperatures from hal" not in section:
            continue
        tm = _TEMP.search(stripped)
        if not tm:
            continue
        kv = {k: v.strip() for k, v in _KV.findall(tm["body"])}
        value, ttype = _num(kv.get("mValue")), _num(kv.get("mType"))
        if value is None or ttype is None or int(ttype) not in TEMPERATURE_TYPES:
            continue
        name = kv.get("mName", "") or TEMPERATURE_TYPES.get(int(ttype), "sensor")
        if value <= -99 or value > 200:  # -99.9 marks a missing sensor
            continue
        if name.upper().startswith(VIRTUAL_PREFIX) and int(ttype) != SKIN_TYPE:
            continue  # a state or a figure derived from the physical sensors, not a temperature of its own
        temps[name] = value
    return Thermal(
        status=status,
        hal_ready=hal_ready,
        temperatures_c=temps,
        max_temp_c=max(temps.values()) if temps else None,
    )


# ---------------------------------------------------------------- /proc


def parse_meminfo(text: str) -> dict[str, int]:
    """/proc/meminfo -> {field: kB}; vendor fields are kept, unparsable lines skipped."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        m = re.match(r"^\s*([\w()]+):\s+(\d+)(?:\s*kB)?\s*$", line)
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


def ram_mb(meminfo: dict[str, int]) -> float | None:
    total = meminfo.get("MemTotal")
    return None if total is None else round(total / 1024.0, 1)


# ---------------------------------------------------------------- df

_SIZE = re.compile(r"^(\d+(?:\.\d+)?)([KMGT]?)$", re.IGNORECASE)
_UNIT_MB = {"": 1 / 1024.0, "K": 1 / 1024.0, "M": 1.0, "G": 1024.0, "T": 1024.0 * 1024}


def parse_df_free_mb(text: str) -> float | None:
    """`df -k PATH` (toybox: 1K-blocks Used Available) or old toolbox (`Size Used Free Blksize`
    with 12.3G sizes) -> free MB of the last filesystem listed."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) < 2:
        return None
    header = lines[0].split()
    col = None
    for name in ("Available", "Avail", "Free"):
        if name in header:
            col = header.index(name)
            break
    if col is None:
        return None
    one_k = "1K-blocks" in header or "1k-blocks" in header
    # A long filesystem name may wrap onto its own line: join rows until they have enough fields.
    rows: list[list[str]] = []
    pending: list[str] = []
    for ln in lines[1:]:
        pending += ln.split()
        if len(pending) >= len(header) - 1:
            rows.append(pending)
            pending = []
    if not rows:
        return None
    cell = rows[-1][col] if col < len(rows[-1]) else ""
    m = _SIZE.match(cell)
    if not m:
        return None
    number, unit = float(m.group(1)), m.group(2).upper()
    if one_k or unit == "":
        return round(number / 1024.0, 1)
    return round(number * _UNIT_MB[unit], 1)
