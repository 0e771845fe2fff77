"""Pure parsing of what a Linux board tells about itself (one marker-separated shell reply).

`info_script` builds the one command SshDevice.info() runs; `board_info` turns its reply into a
DeviceInfo. Every probe may be missing on a given board (no device tree, no vcgencmd): an absent
section leaves its field empty instead of failing.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from ..telemetry.android import parse_df_free_mb, parse_meminfo, ram_mb
from .types import DeviceInfo

MARKER = "@@EDGEFARM@@"
PROBES = (
    "hostname",
    "model",
    "cpuinfo",
    "nproc",
    "meminfo",
    "os_release",
    "df",
    "machine",
    "vcgencmd_temp",
    "vcgencmd_throttled",
    "thermal",
    "python",
)
LITERT_PROBE = "import importlib.util,sys;print(sys.version.split()[0],importlib.util.find_spec('litert_lm') is not None)"


def info_script(workdir: PurePosixPath, python: str) -> str:
    """One sh command printing every probe after a marker line (stderr of each probe dropped)."""
    wd = shlex.quote(str(workdir))
    parts = [
        "uname -n",
        "tr -d '\\000' < /proc/device-tree/model || tr -d '\\000' < /sys/firmware/devicetree/base/model",
        "cat /proc/cpuinfo",
        "nproc",
        "cat /proc/meminfo",
        "cat /etc/os-release",
        f'd={wd}; while [ ! -d "$d" ]; do d=$(dirname "$d"); done; df -Pk "$d"',
        "uname -m",
        "vcgencmd measure_temp",
        "vcgencmd get_throttled",
        "cat /sys/class/thermal/thermal_zone0/temp",
        shlex.join([python, "-c", LITERT_PROBE]),
    ]
    return "; ".join(f"echo {MARKER}; ( {p} ) 2>/dev/null" for p in parts)


def split_sections(text: str) -> dict[str, str]:
    """The reply of info_script -> {probe name: its output} (missing probes are empty)."""
    chunks = text.split(MARKER + "\n")[1:]
    chunks += [""] * (len(PROBES) - len(chunks))
    return dict(zip(PROBES, (c.strip() for c in chunks), strict=False))


def parse_cpuinfo(text: str) -> tuple[str, str]:
    """/proc/cpuinfo -> (cpu name, board model from the `Model` line; Raspberry Pi kernels print it)."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() not in fields:
            fields[key.strip()] = value.strip()
    cpu = fields.get("model name") or fields.get("Hardware") or fields.get("Processor") or ""
    if not cpu and fields.get("CPU part"):
        cpu = f"{fields.get('CPU implementer', '')} part {fields['CPU part']}".strip()
    return cpu, fields.get("Model", "")


def parse_os_release(text: str) -> str:
    """/etc/os-release -> PRETTY_NAME (else NAME VERSION)."""
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            fields[key.strip()] = value.strip().strip('"')
    return fields.get("PRETTY_NAME") or " ".join(x for x in (fields.get("NAME"), fields.get("VERSION")) if x)


def parse_vcgencmd_temp(text: str) -> float | None:
    """`temp=48.3'C` -> 48.3."""
    m = re.search(r"temp=([\d.]+)", text)
    return float(m.group(1)) if m else None


THROTTLE_BITS = {0: "under-voltage", 1: "arm frequency capped", 2: "throttled", 3: "soft temperature limit"}


def parse_throttled(text: str) -> dict[str, Any] | None:
    """`throttled=0x50000` -> {raw, now: [...], occurred: [...]} (bits 0-3 now, 16-19 since boot)."""
    m = re.search(r"throttled=(0x[0-9a-fA-F]+)", text)
    if not m:
        return None
    value = int(m.group(1), 16)
    return {
        "raw": m.group(1),
        "now": [name for bit, name in THROTTLE_BITS.items() if value >> bit & 1],
        "occurred": [name for bit, name in THROTTLE_BITS.items() if value >> (bit + 16) & 1],
    }


def parse_python_probe(text: str) -> tuple[str, bool | None]:
    """`3.11.2 True` -> ("3.11.2", True); no reply (python missing) -> ("", None)."""
    words = text.split()
    if len(words) >= 2 and words[-1] in ("True", "False"):
        return words[-2], words[-1] == "True"
    return "", None


def board_info(
    name: str, serial: str, sections: Mapping[str, str], extra: Mapping[str, Any] | None = None
) -> DeviceInfo:
    """DeviceInfo of a board from split_sections() output."""
    cpu, cpuinfo_model = parse_cpuinfo(sections.get("cpuinfo", ""))
    cores = sections.get("nproc", "")
    thermal = sections.get("thermal", "")
    milli_c = int(thermal) if thermal.lstrip("-").isdigit() else None
    py_version, has_litert = parse_python_probe(sections.get("python", ""))
    return DeviceInfo(
        name=name,
        kind="ssh",
        serial=serial,
        model=sections.get("model", "") or cpuinfo_model or sections.get("hostname", ""),
        cpu=cpu,
        abi=sections.get("machine", ""),
        os=parse_os_release(sections.get("os_release", "")),
        cores=int(cores) if cores.isdigit() else None,
        ram_mb=ram_mb(parse_meminfo(sections.get("meminfo", ""))),
        free_storage_mb=parse_df_free_mb(sections.get("df", "")),
        extra={
            "hostname": sections.get("hostname", ""),
            "temp_c": parse_vcgencmd_temp(sections.get("vcgencmd_temp", ""))
            or (round(milli_c / 1000.0, 1) if milli_c is not None else None),
            "throttled": parse_throttled(sections.get("vcgencmd_throttled", "")),
            "python_version": py_version,
            "litert_lm": has_litert,
            **(extra or {}),
        },
    )
