"""A Raspberry Pi's aarch64 userland for the device lab: Debian arm64 python3.11 under qemu-user.

    python -m tests.lab.ssh.aarch64 [--cache DIR]     # fetch + build now (scripts/fetch_aarch64_lab.sh)

Built from nothing without root and without touching the host's dpkg state:
  1. a private APT configuration (APT_CONFIG, architecture arm64 only) downloads the .debs of
     PACKAGES from the Debian mirror (`apt-get -d install`), each unpacked with `dpkg-deb -x`;
  2. the `manylinux_2_27_aarch64` wheel of litert-lm-api is fetched with `pip download` (it is NOT
     installed into the rootfs: `edgefarm setup` installs it on the board, as on a real Pi);
  3. a Raspberry Pi 5 /proc/cpuinfo goes to ROOTFS/proc/cpuinfo (qemu 7.2 otherwise shows the guest
     the host's x86 one and the runtime's CPU detection segfaults on it), and the Pi 5's device
     tree model and compatible strings to ROOTFS/proc/device-tree/ (with -L, qemu reads these first);
  4. the interpreter's standard library is byte-compiled, as Debian's postinst (py3compile) does on a
     real Pi: `dpkg-deb -x` runs no maintainer script, and without .pyc every start under qemu compiled
     its imports from source (json, subprocess, venv, zipfile: 1.35 s of emulated CPU, 0.45 s compiled).
     The host's python compiles them when it is the same minor version (the .pyc format is one per
     minor version; a board's python reading a .pyc of another version would ignore it and compile).
Everything lands in a cache folder keyed by a hash of the inputs, so the second build is instant.

`python3_wrapper` writes the board's `python3`: qemu-aarch64-static -L ROOTFS with the emulated CPU
PINNED to cortex-a76 (qemu's default `max` CPU gives silently wrong answers, cortex-a72 aborts: the
library uses LSE atomics). `-0 "$0"` hands Python the path it was started as, so a venv made from
this interpreter (its bin/python3 links back here) finds its own pyvenv.cfg.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from android_runner.runtime_pin import PINNED_REQUIREMENT

MIRROR = "http://deb.debian.org/debian"
SUITE = "bookworm"
PACKAGES = ("python3.11", "python3.11-venv", "libstdc++6")
# Raspberry Pi OS 11 (bullseye) ships Python 3.9: the board `edgefarm setup` must refuse, with the fix
OLD_SUITE, OLD_PACKAGES, OLD_PYTHON = "bullseye", ("python3.9",), "python3.9"
WHEEL_PLATFORM = "manylinux_2_27_aarch64"
QEMU = "qemu-aarch64-static"
QEMU_CPU = "cortex-a76"
KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
PI5_MODEL = "Raspberry Pi 5 Model B Rev 1.0"
PI5_COMPATIBLE = b"raspberrypi,5-model-b\0brcm,bcm2712\0"
PI5_CPUINFO = (
    "".join(
        f"processor\t: {n}\nBogoMIPS\t: 108.00\n"
        "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm "
        "lrcpc dcpop asimddp\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x4\n"
        "CPU part\t: 0xd0b\nCPU revision\t: 1\n\n"
        for n in range(4)
    )
    + f"Revision\t: d04170\nSerial\t\t: 1a2b3c4d5e6f7a8b\nModel\t\t: {PI5_MODEL}\n"
)


class LabSetupError(RuntimeError):
    """The aarch64 board cannot be built on this machine (the message says what to install)."""


def default_cache() -> Path:
    base = os.environ.get("EDGEFARM_LAB_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "edgefarm-lab"
    )
    return Path(base)


def cache_key(suite: str = SUITE, packages: tuple[str, ...] = PACKAGES) -> str:
    text = "\n".join([MIRROR, suite, *packages, PINNED_REQUIREMENT, WHEEL_PLATFORM, PI5_CPUINFO, "v3"])
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _run(argv: list[str], what: str, env: dict | None = None, timeout: float = 600) -> str:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout, check=False)
    except FileNotFoundError:
        raise LabSetupError(f"{what}: {argv[0]} not found") from None
    except subprocess.TimeoutExpired:
        raise LabSetupError(f"{what}: no result within {timeout:g} s") from None
    if p.returncode != 0:
        raise LabSetupError(f"{what} failed (exit {p.returncode}): {(p.stderr or p.stdout)[-1500:]}")
    return p.stdout


def require_tools() -> None:
    missing = [t for t in (QEMU, "apt-get", "dpkg-deb") if not shutil.which(t)]
    if missing:
        raise LabSetupError(
            f"missing {', '.join(missing)}: `apt-get install -y qemu-user-static` (scripts/test.sh does)"
        )
    if not KEYRING.is_file():
        raise LabSetupError(f"missing {KEYRING}: `apt-get install -y debian-archive-keyring`")


def fetch_debs(work: Path, suite: str = SUITE, packages: tuple[str, ...] = PACKAGES) -> list[Path]:
    """arm64 .debs of PACKAGES and their dependencies, with a private apt state (host untouched)."""
    apt = work / "apt"
    for d in ("state/lists/partial", "cache/archives/partial", "etc/apt.conf.d", "etc/preferences.d"):
        (apt / d).mkdir(parents=True, exist_ok=True)
    (apt / "state" / "status").touch()
    (apt / "etc" / "sources.list").write_text(f"deb [arch=arm64 signed-by={KEYRING}] {MIRROR} {suite} main\n")
    conf = apt / "apt.conf"
    conf.write_text(
        "\n".join(
            [
                'APT::Architecture "arm64";',
                'APT::Architectures { "arm64"; };',
                f'Dir::State "{apt / "state"}";',
                f'Dir::State::status "{apt / "state" / "status"}";',
                f'Dir::Cache "{apt / "cache"}";',
                f'Dir::Etc "{apt / "etc"}";',
                'Dir::Etc::SourceList "sources.list";',
                'Dir::Etc::SourceParts "nonexistent";',
                'Dir::Etc::Parts "apt.conf.d";',
                'Dir::Etc::PreferencesParts "preferences.d";',
                'APT::Install-Recommends "false";',
                'APT::Sandbox::User "root";' if os.geteuid() == 0 else "",
                'Debug::NoLocking "true";',
                "",
            ]
        )
    )
    env = {**os.environ, "APT_CONFIG": str(conf), "DEBIAN_FRONTEND": "noninteractive"}
    _run(["apt-get", "-qq", "update"], "apt-get update (arm64, private state)", env)
    _run(["apt-get", "-qq", "-y", "-d", "install", *packages], f"apt-get -d install (arm64, {suite})", env)
    debs = sorted((apt / "cache" / "archives").glob("*.deb"))
    if not debs:
        raise LabSetupError("apt-get downloaded no .deb")
    return debs


def fetch_wheel(dest: Path) -> Path:
    """The aarch64 manylinux wheel of litert-lm-api (pip download, binary only)."""
    dest.mkdir(parents=True, exist_ok=True)
    found = sorted(dest.glob("litert_lm_api-*aarch64*.whl"))
    if found:
        return found[-1]
    _run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
         "--platform", WHEEL_PLATFORM, "--python-version", "3.11", "-d", str(dest), PINNED_REQUIREMENT],
        f"pip download {PINNED_REQUIREMENT} ({WHEEL_PLATFORM})",
    )  # fmt: skip
    found = sorted(dest.glob("litert_lm_api-*aarch64*.whl"))
    if not found:
        raise LabSetupError(f"pip download gave no aarch64 wheel in {dest}")
    return found[-1]


def build(cache: Path | None = None, old: bool = False) -> Path:
    """The cached aarch64 rootfs (built when missing); its folder also holds `wheels/`.
    `old`: Debian 11 with Python 3.9 (what Raspberry Pi OS 11 has), no wheel."""
    require_tools()
    suite, packages, python = (
        (OLD_SUITE, OLD_PACKAGES, OLD_PYTHON) if old else (SUITE, PACKAGES, "python3.11")
    )
    top = (cache or default_cache()) / f"aarch64-{suite}-{cache_key(suite, packages)}"
    top.mkdir(parents=True, exist_ok=True)
    # Several pytest workers ask at once on a fresh machine (an empty cache): one builds, the others wait
    # for it and use its rootfs (without the lock one removed the rootfs another was probing).
    with open(top / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _build_locked(top, suite, packages, python, old)


def _build_locked(top: Path, suite: str, packages: tuple[str, ...], python: str, old: bool) -> Path:
    rootfs = top / "rootfs"
    if (top / "READY").is_file():
        if not old:
            fetch_wheel(top / "wheels")
        return top
    with tempfile.TemporaryDirectory(dir=top) as tmp:
        work = Path(tmp)
        debs = fetch_debs(work, suite, packages)
        new_root = work / "rootfs"
        for deb in debs:
            _run(["dpkg-deb", "-x", str(deb), str(new_root)], f"dpkg-deb -x {deb.name}")
        (new_root / "proc" / "device-tree").mkdir(parents=True, exist_ok=True)
        (new_root / "proc" / "cpuinfo").write_text(PI5_CPUINFO)
        (new_root / "proc" / "device-tree" / "model").write_bytes(PI5_MODEL.encode() + b"\0")
        (new_root / "proc" / "device-tree" / "compatible").write_bytes(PI5_COMPATIBLE)
        byte_compile(new_root, python)
        if rootfs.exists():
            shutil.rmtree(rootfs)
        new_root.rename(rootfs)
    if not old:
        fetch_wheel(top / "wheels")
    probe = _run(
        [
            *qemu_argv(top, python),
            "-c",
            "import platform,sys;print(platform.machine(),sys.version.split()[0])",
        ],
        f"the aarch64 {python} under qemu",
        env={**os.environ, "QEMU_CPU": QEMU_CPU},
        timeout=120,
    )
    expected = f"aarch64 {python.removeprefix('python')}"
    if not probe.startswith(expected):
        raise LabSetupError(f"the aarch64 {python} answered {probe!r}, expected '{expected}.x'")
    (top / "READY").write_text(probe)
    return top


def byte_compile(root: Path, python: str) -> None:
    """The board's standard library (ROOT/usr/lib/pythonX.Y) compiled to .pyc by this host's python, named
    by their paths on the board; nothing when this host's python is another minor version."""
    if python != f"python{sys.version_info.major}.{sys.version_info.minor}":
        return
    lib = f"/usr/lib/{python}"
    _run([sys.executable, "-m", "compileall", "-q", "-j", "0", "-d", lib, str(root / lib.lstrip("/"))],
         f"byte-compiling the board's {lib}")  # fmt: skip


def qemu_argv(top: Path, python: str = "python3.11") -> list[str]:
    rootfs = top / "rootfs"
    return [shutil.which(QEMU) or QEMU, "-L", str(rootfs), str(rootfs / "usr" / "bin" / python)]


def python3_wrapper(top: Path, bin_dir: Path, python: str = "python3.11") -> Path:
    """bin_dir/python3 (and python3.X): the board's interpreter, aarch64 under qemu-user."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    qemu, _, _, rootfs_py = qemu_argv(top, python)
    rootfs = top / "rootfs"
    script = (
        "#!/bin/sh\n"
        "# aarch64 Debian python3.11 under qemu-user, emulated CPU pinned (see tests/lab/ssh/aarch64.py)\n"
        f"QEMU_CPU={QEMU_CPU}; export QEMU_CPU\n"
        f'exec {qemu} -L {rootfs} -0 "$0" {rootfs_py} "$@"\n'
    )
    for name in ("python3", python):
        path = bin_dir / name
        path.write_text(script)
        path.chmod(0o755)
    return bin_dir / "python3"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=None, help="cache folder (default ~/.cache/edgefarm-lab)")
    args = ap.parse_args()
    try:
        tops = [build(args.cache), build(args.cache, old=True)]
    except LabSetupError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print("\n".join(map(str, tops)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
