"""Pure parsing of what a Linux board tells about itself (one marker-separated shell reply).

`info_script` builds the one command SshDevice.info() runs; `board_info` turns its reply into a
DeviceInfo. Every probe may be missing on a given board (no device tree, no vcgencmd): an absent
section leaves its field empty instead of failing.

The board's Python answers for itself too (PY_PROBE): architecture, C library, cpuinfo and device
tree as the runtime sees them. That is the view that counts (an x86 shell around an emulated
aarch64 Python says x86_64), and it is preferred over the shell's where both exist.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

from ..telemetry.android import parse_df_free_mb, parse_meminfo, ram_mb
from ..telemetry.host_load import START_PROBE, parse_start_probe
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
    "compatible",
    "runner",
    "cpu_khz",
    "start",
)
PY_TAG = "EDGEFARM-PY "
EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
# Runs on any python3 (no f-strings, no walrus): a board with too old a Python must still say so. It starts
# on every `info()`, twice on a set-up board (the env's Python too), so it imports little: the runtime's
# version from its wheel's dist-info folder next to the package (importlib.metadata only when there is
# none), venv and ensurepip looked up, not imported (0.68 s -> 0.47 s of CPU on the emulated aarch64 lab board).
PY_PROBE = (
    "import sys,os,json\n"
    "r={'version':sys.version.split()[0],'executable':sys.executable,'machine':os.uname()[4],"
    "'candidate':sys.argv[1] if len(sys.argv)>1 else ''}\n"
    "try:\n r['libc']=os.confstr('CS_GNU_LIBC_VERSION') or ''\n"
    "except Exception:\n import platform;r['libc']=' '.join(platform.libc_ver()).strip()\n"
    "r['litert_lm'],r['litert_lm_version'],r['venv']=False,'',False\n"
    "try:\n import importlib.util as u;s=u.find_spec('litert_lm');r['litert_lm']=s is not None\n"
    " r['venv']=u.find_spec('venv') is not None and u.find_spec('ensurepip') is not None\n"
    "except Exception:\n s=None\n"
    "if s is not None:\n"
    " try:\n  d=os.path.dirname(os.path.dirname(s.origin))\n"
    "  v=[n[14:-10] for n in os.listdir(d) if n.startswith('litert_lm_api-') and n.endswith('.dist-info')]\n"
    "  r['litert_lm_version']=sorted(v)[-1]\n"
    " except Exception:\n"
    "  try:\n   from importlib import metadata as m;r['litert_lm_version']=m.version('litert-lm-api')\n"
    "  except Exception:\n   pass\n"
    "for k,p in (('dt_model','/proc/device-tree/model'),('dt_compatible','/proc/device-tree/compatible'),"
    "('cpuinfo','/proc/cpuinfo')):\n"
    " try:\n  r[k]=open(p,'rb').read().decode('utf-8','replace').replace(chr(0),'\\n').strip()\n"
    " except Exception:\n  r[k]=''\n"
    "print('" + PY_TAG + "'+json.dumps(r))\n"
)

# Arm's CPU part numbers (implementer 0x41): /proc/cpuinfo gives only the number.
ARM_PARTS = {
    0xD03: "Cortex-A53", 0xD04: "Cortex-A35", 0xD05: "Cortex-A55", 0xD07: "Cortex-A57",
    0xD08: "Cortex-A72", 0xD09: "Cortex-A73", 0xD0A: "Cortex-A75", 0xD0B: "Cortex-A76",
    0xD0C: "Neoverse-N1", 0xD0D: "Cortex-A77", 0xD0E: "Cortex-A76AE", 0xD40: "Neoverse-V1",
    0xD41: "Cortex-A78", 0xD44: "Cortex-X1", 0xD46: "Cortex-A510", 0xD47: "Cortex-A710",
    0xD48: "Cortex-X2", 0xD49: "Neoverse-N2", 0xD4B: "Cortex-A78C", 0xD4D: "Cortex-A715",
    0xD4E: "Cortex-X3", 0xD80: "Cortex-A520", 0xD81: "Cortex-A720", 0xD82: "Cortex-X4",
}  # fmt: skip
# A Pi's kernel prints a fixed `Hardware: BCM2835` on every model: the SoC comes from the model.
PI_SOCS = (("Raspberry Pi 5", "BCM2712"), ("Raspberry Pi 4", "BCM2711"), ("Compute Module 4", "BCM2711"),
           ("Raspberry Pi 400", "BCM2711"), ("Raspberry Pi 3", "BCM2837"), ("Raspberry Pi Zero 2", "RP3A0"))  # fmt: skip


def python_candidates(workdir: PurePosixPath, python: str | None) -> list[str]:
    """Interpreters to try, in order: the devices.yaml `python` (else python3), then the env that
    `edgefarm setup` makes in the work folder."""
    return [python or "python3", str(venv_python(workdir))]


def venv_python(workdir: PurePosixPath) -> PurePosixPath:
    return PurePosixPath(workdir) / "venv" / "bin" / "python3"


def info_script(workdir: PurePosixPath, pythons: Sequence[str] | str) -> str:
    """One sh command printing every probe after a marker line (stderr of each probe dropped)."""
    if isinstance(pythons, str):
        pythons = [pythons]
    wd = shlex.quote(str(workdir))
    py = "; ".join(
        f"command -v {shlex.quote(p)} >/dev/null && {shlex.join([p, '-c', PY_PROBE, p])}" for p in pythons
    )
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
        py,
        "tr '\\000' '\\n' < /proc/device-tree/compatible",
        # the runner's identity: sha256 of its files' `sha256sum` lines, in byte order of their paths
        f"cd {wd}/runner && find . -type f -name '*.py' | LC_ALL=C sort | xargs -r sha256sum | sha256sum",
        "cat /sys/devices/system/cpu/cpu*/cpufreq/scaling_cur_freq",
        START_PROBE,  # the board's background CPU and load before the run (0.2 s)
    ]
    return "; ".join(f"echo {MARKER}; ( {p} ) 2>/dev/null" for p in parts)


def split_sections(text: str) -> dict[str, str]:
    """The reply of info_script -> {probe name: its output} (missing probes are empty)."""
    chunks = text.split(MARKER + "\n")[1:]
    chunks += [""] * (len(PROBES) - len(chunks))
    return dict(zip(PROBES, (c.strip() for c in chunks), strict=False))


def parse_cpuinfo(text: str) -> tuple[str, str]:
    """/proc/cpuinfo -> (cpu name, board model from the `Model` line; Raspberry Pi kernels print it).

    Arm cores are named by part number and counted per kind ("4x Cortex-A76", big.LITTLE as
    "4x Cortex-A78 + 4x Cortex-A55"); x86 by `model name`."""
    fields: dict[str, str] = {}
    parts: list[tuple[str, str]] = []
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if not sep:
            continue
        if key not in fields:
            fields[key] = value
        if key == "CPU implementer":
            parts.append((value, ""))
        elif key == "CPU part" and parts and not parts[-1][1]:
            parts[-1] = (parts[-1][0], value)
    cpu = fields.get("model name", "")
    if not cpu and parts:
        counts: dict[str, int] = {}
        for implementer, part in parts:
            name = _arm_core(implementer, part)
            counts[name] = counts.get(name, 0) + 1
        cpu = " + ".join(f"{n}x {name}" for name, n in counts.items())
    if not cpu:
        cpu = fields.get("Processor") or fields.get("Hardware") or ""
    return cpu, fields.get("Model", "")


def _arm_core(implementer: str, part: str) -> str:
    try:
        number = int(part, 16)
    except ValueError:
        return f"part {part}"
    if implementer.lower() == "0x41" and number in ARM_PARTS:
        return ARM_PARTS[number]
    return f"{implementer} part {part}".strip()


def soc_name(model: str, compatible: str, cpuinfo: str) -> str:
    """The SoC: device tree `compatible` (brcm,bcm2712 -> BCM2712), else the Pi model, else the
    cpuinfo `Hardware` line (except a Pi's fixed BCM2835)."""
    entries = [c.strip() for c in compatible.splitlines() if c.strip()]
    if entries and "," in entries[-1]:
        return entries[-1].split(",", 1)[1].upper()
    for prefix, soc in PI_SOCS:
        if model.startswith(prefix):
            return soc
    hardware = next(
        (ln.partition(":")[2].strip() for ln in cpuinfo.splitlines() if ln.startswith("Hardware")), ""
    )
    return "" if model.startswith("Raspberry Pi") else hardware


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
    """The python probe's reply -> (version, litert_lm importable); no reply -> ("", None).
    Also reads the older `3.11.2 True` form."""
    probes = parse_python_probes(text)
    if probes:
        best = pick_python(probes)
        return best.get("version", ""), bool(best.get("litert_lm"))
    words = text.split()
    if len(words) >= 2 and words[-1] in ("True", "False"):
        return words[-2], words[-1] == "True"
    return "", None


def parse_python_probes(text: str) -> list[dict[str, Any]]:
    """One dict per interpreter that answered (in the order tried)."""
    out = []
    for line in text.splitlines():
        if line.startswith(PY_TAG):
            try:
                value = json.loads(line[len(PY_TAG) :])
            except ValueError:
                continue
            if isinstance(value, dict):
                out.append(value)
    return out


def pick_python(probes: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """The interpreter runs use: the first with litert_lm, else the first that answered."""
    return next((p for p in probes if p.get("litert_lm")), probes[0] if probes else {})


def parse_cpu_mhz(text: str) -> float | None:
    """scaling_cur_freq of every core (kHz) -> the highest, in MHz."""
    khz = [int(x) for x in text.split() if x.isdigit()]
    return round(max(khz) / 1000.0, 1) if khz else None


def board_info(
    name: str, serial: str, sections: Mapping[str, str], extra: Mapping[str, Any] | None = None
) -> DeviceInfo:
    """DeviceInfo of a board from split_sections() output."""
    probes = parse_python_probes(sections.get("python", ""))
    py = pick_python(probes)
    cpuinfo_text = py.get("cpuinfo") or sections.get("cpuinfo", "")
    cpu, cpuinfo_model = parse_cpuinfo(cpuinfo_text)
    model = py.get("dt_model") or sections.get("model", "") or cpuinfo_model
    compatible = py.get("dt_compatible") or sections.get("compatible", "")
    cores = sections.get("nproc", "")
    thermal = sections.get("thermal", "")
    milli_c = int(thermal) if thermal.lstrip("-").isdigit() else None
    if probes:
        py_version, has_litert = py.get("version", ""), bool(py.get("litert_lm"))
    else:
        py_version, has_litert = parse_python_probe(sections.get("python", ""))
    runner = sections.get("runner", "").split()  # empty folder: the sha256 of nothing, below
    if runner and runner[0] == EMPTY_SHA256:
        runner = []
    return DeviceInfo(
        name=name,
        kind="ssh",
        serial=serial,
        model=model or sections.get("hostname", ""),
        soc=soc_name(model, compatible, cpuinfo_text),
        cpu=cpu,
        abi=py.get("machine") or sections.get("machine", ""),
        os=parse_os_release(sections.get("os_release", "")),
        cores=int(cores) if cores.isdigit() else None,
        ram_mb=ram_mb(parse_meminfo(sections.get("meminfo", ""))),
        free_storage_mb=parse_df_free_mb(sections.get("df", "")),
        extra={
            "hostname": sections.get("hostname", ""),
            "temp_c": parse_vcgencmd_temp(sections.get("vcgencmd_temp", ""))
            or (round(milli_c / 1000.0, 1) if milli_c is not None else None),
            "throttled": parse_throttled(sections.get("vcgencmd_throttled", "")),
            "cpu_mhz": parse_cpu_mhz(sections.get("cpu_khz", "")),
            "python_version": py_version,
            "python_path": py.get("executable", ""),
            "libc": py.get("libc", ""),
            "venv_available": py.get("venv"),
            "litert_lm": has_litert,
            "litert_lm_version": py.get("litert_lm_version", ""),
            "runner_sha256": runner[0] if runner and len(runner[0]) == 64 else "",
            "shell_machine": sections.get("machine", ""),
            **parse_start_probe(sections.get("start", ""), int(cores) if cores.isdigit() else None),
            **(extra or {}),
        },
    )
