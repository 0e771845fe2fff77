"""Can this board run the pinned runtime and this model? A pure verdict from its facts.

Each check is ok / warn / fail with the fix; setup stops at the first fail before touching the board.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..devices.types import DeviceInfo

MIN_PYTHON = (3, 10)
MIN_GLIBC = (2, 27)  # the wheels are manylinux_2_27
WHEEL_PLATFORMS = {"aarch64": "manylinux_2_27_aarch64", "x86_64": "manylinux_2_27_x86_64"}
ENV_MB = 200.0  # the env with litert-lm-api installed (measured: 153 MB with pip), plus its wheel
RAM_HEADROOM_MB = 256.0  # runtime, KV cache and OS beyond the mapped weights


@dataclass(frozen=True)
class Check:
    name: str  # architecture | glibc | python | disk | ram
    status: str  # ok | warn | fail
    found: str
    need: str
    fix: str = ""


@dataclass(frozen=True)
class Verdict:
    checks: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        return all(c.status != "fail" for c in self.checks)

    @property
    def failures(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if c.status == "fail")

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "checks": [c.__dict__ for c in self.checks]}


def _version(text: str, parts: int = 2) -> tuple[int, ...] | None:
    nums = []
    for piece in text.replace("-", ".").split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        if not digits:
            break
        nums.append(int(digits))
    return tuple(nums[:parts]) if len(nums) >= parts else None


def judge(info: DeviceInfo, model_bytes: int, *, offline: bool, python: str = "python3") -> Verdict:
    """Architecture, glibc, Python, free disk in the work folder and RAM against the model size."""
    x: Mapping[str, Any] = info.extra
    model_mb = model_bytes / 2**20
    checks = []
    arch = info.abi
    checks.append(
        Check("architecture", "ok", arch, "aarch64 or x86_64 (64-bit)")
        if arch in WHEEL_PLATFORMS
        else Check(
            "architecture", "fail", arch or "unknown", "aarch64 or x86_64 (64-bit)",
            "litert-lm-api has no wheel for this CPU: install a 64-bit OS (64-bit Raspberry Pi OS on a Pi 4/5)",
        )
    )  # fmt: skip
    py = str(x.get("python_version") or "")
    pyv = _version(py)
    if not py:
        checks.append(Check("python", "fail", f"no {python}", "3.10+",
                            "install Python 3.10+ on the board: `sudo apt install python3 python3-venv`"))  # fmt: skip
    elif pyv is None or pyv < MIN_PYTHON:
        checks.append(Check("python", "fail", py, "3.10+",
                            "install Python 3.10+ on the board (e.g. `sudo apt install python3.11 python3.11-venv`) "
                            "and set `python:` in devices.yaml to it"))  # fmt: skip
    elif not offline and x.get("venv_available") is False:
        checks.append(Check("python", "fail", f"{py} without venv/ensurepip", "3.10+ with venv",
                            "on the board: `sudo apt install python3-venv`, or use `edgefarm setup --offline`"))  # fmt: skip
    else:
        checks.append(Check("python", "ok", py, "3.10+"))
    libc = str(x.get("libc") or "")
    glibc = _version(libc.split()[-1]) if libc.startswith("glibc") else None
    if glibc is None:
        checks.append(Check("glibc", "fail" if libc else "warn", libc or "unknown", "glibc 2.27+",
                            "the wheels need glibc 2.27+ (musl distributions such as Alpine cannot run them)"))  # fmt: skip
    elif glibc < MIN_GLIBC:
        checks.append(Check("glibc", "fail", libc, "glibc 2.27+",
                            "upgrade the OS: the wheels are manylinux_2_27 (Debian 10+, Ubuntu 18.04+)"))  # fmt: skip
    else:
        checks.append(Check("glibc", "ok", libc, "glibc 2.27+"))
    need_mb = ENV_MB + model_mb + 50.0
    free = info.free_storage_mb
    if free is None:
        checks.append(Check("disk", "warn", "unknown", f"{need_mb:.0f} MB free"))
    elif free < need_mb:
        checks.append(Check("disk", "fail", f"{free:.0f} MB free", f"{need_mb:.0f} MB free",
                            "free space on the board, or point workdir in devices.yaml at a bigger disk"))  # fmt: skip
    else:
        checks.append(Check("disk", "ok", f"{free:.0f} MB free", f"{need_mb:.0f} MB free"))
    ram, need_ram = info.ram_mb, model_mb + RAM_HEADROOM_MB
    if ram is None:
        checks.append(Check("ram", "warn", "unknown", f"{need_ram:.0f} MB"))
    elif ram < model_mb:
        checks.append(Check("ram", "fail", f"{ram:.0f} MB", f"{need_ram:.0f} MB",
                            "the model does not fit in this board's memory: use a smaller (more quantized) model"))  # fmt: skip
    elif ram < need_ram:
        checks.append(Check("ram", "warn", f"{ram:.0f} MB", f"{need_ram:.0f} MB",
                            "tight: close other programs, expect swapping"))  # fmt: skip
    else:
        checks.append(Check("ram", "ok", f"{ram:.0f} MB", f"{need_ram:.0f} MB"))
    return Verdict(tuple(checks))
