"""`edgefarm setup`: an isolated Python env with the pinned runtime, and the runner, on one board.

    WORKDIR/venv     python -m venv from the board's python (devices.yaml `python`, else python3)
    WORKDIR/wheels   offline mode: the wheel the host downloaded for the board's platform
    WORKDIR/runner   the Python runner (what `run` would push anyway; pushed now so the board is ready)

Online, the board's own pip installs litert-lm-api from the board's own index (its pip.conf /
PIP_INDEX_URL): the pip wheel the board's Python carries for venv (what ensurepip would install),
run from that wheel by the env's Python. The env is made without pip, as offline: ensurepip would
install pip and setuptools into it and byte-compile both, the longest part of an online setup (on the
emulated aarch64 lab board 19 s of CPU of 25 s). Offline, the host downloads the wheel for the board's
architecture and Python (`pip download --platform manylinux_2_27_<arch>`), pushes it, and the board
unpacks it into the env with its own Python (a wheel is a zip; no pip, no network on the board).
Nothing is touched before the verdict (architecture, glibc, Python, free disk, RAM vs the model) passes.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from android_runner.runtime_pin import PINNED_REQUIREMENT, PINNED_VERSION

from ..devices.ssh import SshDevice
from ..devices.ssh_info import venv_python
from ..devices.types import DeviceInfo
from ..errors import DeviceError
from ..fsutil import cache_dir
from ..runners.python_runner import runner_tree
from .verdict import WHEEL_PLATFORMS, Verdict, judge

WHEELS_IN_CACHE = "wheels"  # downloaded wheels: $EDGEFARM_CACHE_DIR/wheels, else ~/.cache/edgefarm/wheels
STEP_TIMEOUT_S = 900.0  # a 46 MB wheel downloaded and unpacked on a slow SD card
UNPACK = (
    "import sys,sysconfig,zipfile\n"
    "site=sysconfig.get_paths()['purelib']\n"
    "zipfile.ZipFile(sys.argv[1]).extractall(site)\n"
    "print(site)\n"
)
# Run by the env's Python: pip from the wheel ensurepip would install (the distribution's WHEEL_PKG_DIR,
# e.g. Debian's /usr/share/python-wheels, else ensurepip/_bundled), as ensurepip itself runs it; the
# arguments after `-c CODE` are pip's
BOARD_PIP = (
    "import os,runpy,sys,sysconfig,ensurepip\n"
    "dirs=[sysconfig.get_config_var('WHEEL_PKG_DIR') or '',os.path.join(os.path.dirname(ensurepip.__file__),'_bundled')]\n"
    "found=[sorted(os.path.join(d,f) for f in os.listdir(d) if f.startswith('pip-') and f.endswith('.whl'))\n"
    "       for d in dirs if d and os.path.isdir(d)]\n"
    "found=[w[-1] for w in found if w]\n"
    "if not found:\n"
    " sys.exit('no pip wheel for ensurepip in '+' or '.join(d for d in dirs if d)+': install python3-venv')\n"
    "sys.path.insert(0,found[0])\n"
    "runpy.run_module('pip',run_name='__main__',alter_sys=True)\n"
)
Log = Callable[[str], None]
PIP_QUIET = ("--disable-pip-version-check", "--no-input", "-q")


@dataclass
class SetupResult:
    name: str
    mode: str  # online | offline
    verdict: Verdict
    before: DeviceInfo
    after: DeviceInfo | None = None
    seconds: float = 0.0
    steps: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        after = self.after.extra if self.after else {}
        return {
            "name": self.name,
            "mode": self.mode,
            "verdict": self.verdict.as_dict(),
            "abi": self.before.abi,
            "python": after.get("python_path", ""),
            "python_version": after.get("python_version", ""),
            "libc": after.get("libc", ""),
            "litert_lm_version": after.get("litert_lm_version", ""),
            "runner_sha256": after.get("runner_sha256", ""),
            "seconds": round(self.seconds, 1),
            "steps": self.steps,
        }


def setup_board(
    dev: SshDevice,
    model_bytes: int,
    *,
    offline: bool,
    wheels: Path | None = None,
    log: Log = lambda _msg: None,
) -> SetupResult:
    """Verdict, env, runtime, runner, check. Raises DeviceError (one line + fix) at the first problem."""
    t0 = time.monotonic()
    base = dev.python_setting or "python3"
    before = dev.facts()
    verdict = judge(before, model_bytes, offline=offline, python=base)
    result = SetupResult(dev.name, "offline" if offline else "online", verdict, before)
    if not verdict.ok:
        c = verdict.failures[0]
        raise DeviceError(f"cannot set up: {c.name} is {c.found}, needs {c.need}", where=dev.where, fix=c.fix)
    env_py = str(venv_python(dev.workdir))
    x = before.extra
    if x.get("litert_lm") and x.get("litert_lm_version") == PINNED_VERSION:
        log(f"{PINNED_REQUIREMENT} already importable by {x.get('python_path')}")
        result.steps.append("runtime already installed")
    else:
        venv = dev.workdir / "venv"
        log(f"creating {venv} with {base} {x.get('python_version')}")
        argv = [base, "-m", "venv", "--clear", "--without-pip", str(venv)]
        _step(dev, ["mkdir", "-p", str(dev.workdir)], "creating the work folder")
        _step(
            dev, argv, f"creating the env {venv}", fix_extra="on the board: `sudo apt install python3-venv`"
        )
        result.steps.append(f"env {venv}")
        if offline:
            py_xy = ".".join(str(x.get("python_version")).split(".")[:2])
            wheel = host_wheel(dev, before.abi, py_xy, wheels or cache_dir() / WHEELS_IN_CACHE, log)
            remote = dev.workdir / "wheels" / wheel.name
            log(f"pushing {wheel.name} ({wheel.stat().st_size / 2**20:.0f} MB)")
            dev.push(wheel, remote)
            _step(dev, [env_py, "-c", UNPACK, str(remote)], f"unpacking {wheel.name} into the env")
            result.steps.append(f"unpacked {wheel.name}")
        else:
            log(f"installing {PINNED_REQUIREMENT} from the board's own package index")
            _step(
                dev,
                [env_py, "-c", BOARD_PIP, "install", *PIP_QUIET, PINNED_REQUIREMENT],
                f"pip install {PINNED_REQUIREMENT} on the board",
                fix_extra="check the board's network and pip index (pip.conf, PIP_INDEX_URL), or run "
                f"`edgefarm setup {shlex.quote(dev.name)} --offline`",
            )
            result.steps.append(f"pip install {PINNED_REQUIREMENT}")
    log("pushing the runner")
    root = dev.workdir / "runner"
    with runner_tree() as tree:
        dev.push(tree, root)
    result.steps.append(f"runner in {root}")
    after = dev.facts()
    result.after = after
    if not after.extra.get("litert_lm"):
        raise DeviceError(
            f"litert_lm is still not importable after setup (python {after.extra.get('python_version')})",
            where=dev.where,
            fix=f"on the board: `{shlex.quote(env_py)} -c 'import litert_lm'` shows why",
        )
    result.seconds = time.monotonic() - t0
    return result


def _step(dev: SshDevice, argv: list[str], what: str, fix_extra: str = "") -> str:
    """One board command under its deadline; a failure is one DeviceError line with the fix."""
    lines: list[str] = []
    ex = dev.run(argv, timeout_s=STEP_TIMEOUT_S, on_line=lines.append)
    if ex.code == 0:
        return "\n".join(lines)
    text = "\n".join([*lines, ex.output_tail]).strip()
    if "No space left on device" in text or "Disk quota exceeded" in text:
        raise DeviceError(
            f"the board's disk is full while {what}",
            where=dev.where,
            fix=f"free space on the board (`df -h {shlex.quote(str(dev.workdir))}`), or point workdir in devices.yaml "
            "at a bigger disk",
        )
    last = next((ln.strip() for ln in reversed(text.splitlines()) if ln.strip()), "")
    code = ex.code if ex.code is not None else f"signal {ex.signal}"
    how = "timed out" if ex.timed_out else f"exit {code}"
    raise DeviceError(
        f"{what} failed ({how}): {last[:300]}",
        where=dev.where,
        fix=fix_extra or "see the message above; rerun `edgefarm setup` once it is fixed",
    )


def host_wheel(dev: SshDevice, abi: str, python: str, wheels: Path, log: Log) -> Path:
    """The litert-lm-api wheel for the board's platform and Python (X.Y), from the host's cache or
    downloaded into it."""
    wheels = Path(wheels).expanduser()
    tag = WHEEL_PLATFORMS[abi]
    version = PINNED_VERSION
    pattern = f"litert_lm_api-{version}-*{abi}.whl"
    found = sorted(wheels.glob(pattern))
    if found:
        log(f"wheel from the host's cache: {found[-1]}")
        return found[-1]
    wheels.mkdir(parents=True, exist_ok=True)
    log(f"downloading {PINNED_REQUIREMENT} for {tag} on this host")
    argv = [sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
            "--only-binary=:all:", "--platform", tag, "--python-version", python, "-d", str(wheels), PINNED_REQUIREMENT]  # fmt: skip
    p = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=600)
    found = sorted(wheels.glob(pattern))
    if p.returncode != 0 or not found:
        last = (p.stderr.strip().splitlines() or [""])[-1]
        raise DeviceError(
            f"this host could not download {PINNED_REQUIREMENT} for {tag}: {last[:200]}",
            where=dev.where,
            fix=f"on a machine with internet: `pip download --no-deps --only-binary=:all: --platform {tag} "
            f"--python-version {shlex.quote(python)} -d WHEELS {shlex.quote(PINNED_REQUIREMENT)}`, copy WHEELS here, "
            f"then `edgefarm setup {shlex.quote(dev.name)} --offline --wheels WHEELS`",
        )
    return found[-1]
