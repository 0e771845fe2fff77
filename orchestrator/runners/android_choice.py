"""Which runner drives a phone, and what it needs there: the runner choice (native when built, else
the upstream binary), the ABI the runner is built for against the ABIs the phone runs, the pinned
runtime library, storage and memory (`preflight`). `phone_checks` is the phones' part of
`edgefarm doctor` and of the checks `edgefarm run` makes before anything starts (readiness.py);
`AndroidRunner.stage` applies the same choice and preflight. Host-side only; reads host files, asks
the phone one `stat` (is the model there already).
"""

from __future__ import annotations

import os
import re
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Protocol

from android_runner.runtime_pin import PINNED_VERSION, RUNTIME_DIST

from ..bundled import REPO_ROOT
from ..devices.base import Device
from ..devices.files import cached_sha256
from ..devices.types import DeviceInfo, PushStats
from ..errors import DeviceError
from . import android_native as native
from .base import Check, Need

BUILD = REPO_ROOT / "build" / "android_arm64"
STORAGE_MARGIN_MB = 64.0  # runner, libs, media and outputs next to the model
RAM_FRACTION = 0.8  # a model larger than this share of RAM will not run (weights + KV cache + OS)
RUNNER_KINDS = ("native", "upstream")
FIX_BUILD_NATIVE = (
    "build the native runner: `python scripts/build_native_runner.py --android` (needs the Android NDK in "
    "ANDROID_NDK_HOME), or run the upstream binary instead (`runner: upstream` and `runner_path:` in "
    "devices.yaml, or EDGEFARM_ANDROID_RUNNER=/path/to/litert_lm_advanced_main)"
)


class Phone(Device, Protocol):
    """What the phone runners need beyond the device contract (devices/adb.py provides it)."""

    phone_runner: str  # native | upstream | "" (native when built, else upstream)
    runner_binary: Path | None  # the upstream binary
    native_runner: Path | None
    runtime_lib: Path | None
    libs: Sequence[Path]  # extra libraries for the upstream binary (GPU delegates)

    def info(self) -> DeviceInfo: ...

    def remote_sha256(self, paths: Sequence[PurePosixPath]) -> dict[str, str]: ...

    def push_many(
        self, items: Sequence[tuple[Path, PurePosixPath]], have: Mapping[str, str] | None = None
    ) -> list[PushStats]: ...


@dataclass(frozen=True)
class RunnerChoice:
    kind: str  # native | upstream
    binary: Path
    lib: Path | None = None  # the runtime library (native)
    note: str = ""
    allow_runtime: bool = False  # EDGEFARM_ALLOW_RUNTIME=1: run a runtime library that is not the pinned one


def _first_file(*candidates: Path | str | None) -> Path | None:
    for c in candidates:
        if c and Path(c).expanduser().is_file():
            return Path(c).expanduser()
    return None


def choose_runner(device: Phone, env: Mapping[str, str] = os.environ) -> RunnerChoice:
    """Which runner drives this phone: native when it is built (or asked for), else upstream."""
    asked = device.phone_runner or env.get("EDGEFARM_PHONE_RUNNER", "")
    binary = _first_file(device.native_runner, env.get("EDGEFARM_NATIVE_RUNNER"), BUILD / native.RUNNER_NAME)
    lib = _first_file(device.runtime_lib, env.get("EDGEFARM_RUNTIME_LIB"), BUILD / "liblitert-lm.so")
    upstream_binary = _first_file(device.runner_binary, env.get("EDGEFARM_ANDROID_RUNNER"))
    if asked not in ("", *RUNNER_KINDS):
        raise DeviceError(f"unknown phone runner {asked!r}", where=device.name, fix="use native or upstream")
    if asked != "upstream" and binary and lib:
        allow = env.get("EDGEFARM_ALLOW_RUNTIME", "") not in ("", "0")
        return RunnerChoice("native", binary, lib, allow_runtime=allow)
    if asked == "native":
        missing = "the native runner" if not binary else "the runtime library liblitert-lm.so"
        raise DeviceError(f"{missing} for phones is not built", where=device.name, fix=FIX_BUILD_NATIVE)
    if upstream_binary:
        note = (
            "" if asked else "native runner not built: using the upstream binary (one model load per sample)"
        )
        return RunnerChoice("upstream", upstream_binary, note=note)
    where = f" (not found: {device.runner_binary})" if device.runner_binary else ""
    raise DeviceError(f"no runner for this phone{where}", where=device.name, fix=FIX_BUILD_NATIVE)


def preflight(
    info: DeviceInfo,
    model_bytes: int,
    *,
    model_on_device: bool = False,
    floor_bytes: int | None = None,
    media_bytes: int = 0,
) -> str:
    """Why this phone cannot take the model ("" when it can). `floor_bytes`: the model's predicted
    memory floor (weights + KV cache at the run's token limit, model_facts.py), checked against RAM;
    `media_bytes`: the dataset's media (and the runner's files) still to push."""
    model_mb = model_bytes / 2**20
    need_mb = STORAGE_MARGIN_MB + media_bytes / 2**20 + (0.0 if model_on_device else model_mb)
    if info.free_storage_mb is not None and info.free_storage_mb < need_mb:
        return (f"needs {need_mb:.0f} MB free in /data/local/tmp for the model, media and runner, "
                f"the phone has {info.free_storage_mb:.0f} MB")  # fmt: skip
    if info.ram_mb is not None and floor_bytes and floor_bytes / 2**20 > info.ram_mb * RAM_FRACTION:
        return (f"the model needs at least {floor_bytes / 2**20:.1f} MB of memory (weights + KV cache at the "
                f"run's token limit), over {RAM_FRACTION:.0%} of this phone's RAM ({info.ram_mb:.1f} MB)")  # fmt: skip
    if info.ram_mb is not None and model_mb > info.ram_mb * RAM_FRACTION:
        return f"the model ({model_mb:.0f} MB) cannot fit in this phone's RAM ({info.ram_mb:.0f} MB)"
    return ""


def runtime_version(lib: Path) -> str:
    """The runtime library's version, from the `VERSION` file the build script leaves beside it."""
    stamp = lib.parent / "VERSION"
    return stamp.read_text(encoding="utf-8").strip() if stamp.is_file() else ""


UNKNOWN_VERSION = "unknown: no VERSION file beside the runtime library on the host\n"


def version_stamp(lib: Path, tmp: Path) -> Path:
    """The VERSION file pushed beside the library on the phone, every run: the host's copy, or one that
    names no version, so a stale VERSION from an earlier library never speaks for this one."""
    stamp = lib.parent / "VERSION"
    if stamp.is_file():
        return stamp
    made = tmp / "VERSION"
    made.write_text(UNKNOWN_VERSION, encoding="utf-8")
    return made


# ELF e_machine -> the Android ABI a binary is built for (ro.product.cpu.abilist's names)
ELF_ABIS = {183: "arm64-v8a", 40: "armeabi-v7a", 62: "x86_64", 3: "x86", 243: "riscv64"}
PHONE_RUNNER_ABI = "arm64-v8a"  # litert-lm-api's Android wheel (android_23_arm64_v8a) and the NDK build
HEX64 = re.compile(rb"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])")


def binary_abi(path: Path) -> str:
    """The ABI an ELF file is built for; "script" for a `#!` file (runs wherever its interpreter does);
    "" else. Read from the header's first 20 bytes (e_ident's magic and byte order, then e_machine at
    offset 18, the same in 32- and 64-bit files): every run asks this of each phone's runner, and
    pyelftools' import alone took ~30 ms of its start-up (the build still reads symbols with it)."""
    with open(path, "rb") as f:
        head = f.read(20)
    if head[:2] == b"#!":
        return "script"
    if len(head) < 20 or head[:4] != b"\x7fELF" or head[5] not in (1, 2):
        return ""
    (machine,) = struct.unpack("<H" if head[5] == 1 else ">H", head[18:20])
    return ELF_ABIS.get(machine, f"e_machine {machine}")


def runner_check(choice: RunnerChoice, info: DeviceInfo) -> Check:
    """The chosen runner is built for an ABI the phone runs (`ro.product.cpu.abilist`)."""
    abi, runs = binary_abi(choice.binary), info.abis or ((info.abi,) if info.abi else ())
    what = f"{choice.kind} runner {choice.binary}" + (f" ({choice.note})" if choice.note else "")
    if abi == "script" or not runs:
        return Check("runner", True, f"{what} ({'a script' if abi == 'script' else abi or 'not ELF'})")
    if abi in runs:
        return Check("runner", True, f"{what} ({abi})")
    found = f"no runner for {'/'.join(runs)}: the {what} is built for {abi or 'no known ABI'}"
    if PHONE_RUNNER_ABI in runs:
        return Check("runner", False, found, FIX_BUILD_NATIVE)
    return Check("runner", False, found,
                 f"edgefarm's phone runners are built for {PHONE_RUNNER_ABI} (litert-lm-api's Android wheel has no "
                 f"{runs[0]} library): use a 64-bit ARM phone, or build LiteRT-LM's litert_lm_advanced_main for "
                 f"{runs[0]} and name it for this phone (`runner: upstream`, `runner_path:` in devices.yaml)")  # fmt: skip


def runtime_check(choice: RunnerChoice) -> Check:
    """The native runner's library is the one it was built for: its sha256 is the one the runner carries
    (as text: EF_PINNED_SHA256) and its VERSION names the pinned litert-lm-api, as the runner checks at
    start (edgefarm_runner.c check_runtime)."""
    assert choice.lib is not None
    sha, stamp = cached_sha256(choice.lib), runtime_version(choice.lib)
    pins = {m.decode() for m in HEX64.findall(choice.binary.read_bytes())}
    version = (
        stamp.split()[1] if stamp.split()[:1] == [RUNTIME_DIST] and len(stamp.split()) > 1 else "unknown"
    )
    if sha in pins and version == PINNED_VERSION:
        return Check("runtime", True, f"{choice.lib}: {RUNTIME_DIST} {version}, the pinned library")
    if not pins:  # not edgefarm's build (which always carries EF_PINNED_SHA256): nothing to hold it to here
        return Check("runtime", True, f"{choice.lib}: sha256 {sha}, version {version}; the runner {choice.binary} "
                                      "names no pinned library (not edgefarm's build): its own start decides")  # fmt: skip
    pinned = f" (sha256 {next(iter(pins))})" if len(pins) == 1 else ""
    found = (f"the runtime library is not the pinned one: {choice.lib}: sha256 {sha}, version {version}; this "
             f"runner was built for {RUNTIME_DIST} {PINNED_VERSION}{pinned}")  # fmt: skip
    if choice.allow_runtime:
        return Check("runtime", True, found + "; run anyway (EDGEFARM_ALLOW_RUNTIME=1): every row names it")
    return Check("runtime", False, found,
                 "use the pinned library: `python scripts/build_native_runner.py --android` puts it in "
                 f"{BUILD}/; or run this one anyway with EDGEFARM_ALLOW_RUNTIME=1 (every row then names it)")  # fmt: skip


def model_remote(device: Phone, need: Need) -> PurePosixPath:
    """Where the model lives on the phone (by its sha256): AndroidRunner.stage pushes it there."""
    return PurePosixPath(str(device.workdir)) / "models" / need.model_sha256[:16] / need.model_name


def runner_places(device: Phone, choice: RunnerChoice) -> tuple[PurePosixPath, PurePosixPath]:
    """Where staging puts the runner binary and the runtime library's folder on the phone."""
    root = PurePosixPath(str(device.workdir))
    return root / "bin" / choice.binary.name, root / "lib"


def runner_files(device: Phone, choice: RunnerChoice) -> dict[str, Path]:
    """Place on the phone -> local file, for the runner binary and its runtime library."""
    binary, lib_dir = runner_places(device, choice)
    files = {str(binary): choice.binary}
    if choice.lib is not None:
        files[str(lib_dir / choice.lib.name)] = choice.lib
    return files


def sizes_on_phone(device: Phone, paths: Sequence[str]) -> dict[str, int]:
    """path -> size of each of `paths` that is a file on the phone: one `stat` call for all of them (a
    missing file prints no line)."""
    lines: list[str] = []
    device.run(["stat", "-c", "%n %s", *paths], timeout_s=30, on_line=lines.append)
    sizes = {}
    for line in lines:
        path, _, size = line.rpartition(" ")
        if path in paths and size.isdigit():
            sizes[path] = int(size)
    return sizes


def phone_checks(device: Phone, info: DeviceInfo, need: Need, env: Mapping[str, str]) -> tuple[Check, ...]:
    """Runner for the phone's ABI, the pinned runtime library, storage for model and media, memory."""
    try:
        choice = choose_runner(device, env)
    except DeviceError as e:
        return (Check("runner", False, e.what, e.fix),)
    out = [runner_check(choice, info)]
    if choice.lib is not None:
        out.append(runtime_check(choice))
    # What staging will push: the model unless a file of its size is at its place (named by its sha256),
    # and the runner and library unless each is at its place at the same size (the library is ~130 MB:
    # a storage check without it passed phones whose push then failed). A phone with room for all of it
    # passes whatever is there: only a tight one is asked, in one `stat` for the three files (a device
    # call fewer per phone and run in the common case; docs/benchmarks/farm.md).
    runner = {place: f.stat().st_size for place, f in runner_files(device, choice).items()}
    no_ram = replace(info, ram_mb=None)
    storage = preflight(no_ram, need.model_bytes, media_bytes=need.media_bytes + sum(runner.values()))
    model_there = False
    if storage:
        model = str(model_remote(device, need)) if need.model_sha256 else None
        there = sizes_on_phone(device, [*runner, *([model] if model else [])])
        model_there = model is not None and there.get(model) == need.model_bytes
        runner_bytes = sum(size for place, size in runner.items() if there.get(place) != size)
        storage = preflight(no_ram, need.model_bytes, model_on_device=model_there,
                            media_bytes=need.media_bytes + runner_bytes)  # fmt: skip
    free = f"{info.free_storage_mb:.0f} MB free" if info.free_storage_mb is not None else "free space unknown"
    held = "; the model is there already" if model_there else ""
    out.append(Check("storage", not storage, storage or free + held,
                     "free storage on the phone (`adb shell df /data`), or choose a smaller model"))  # fmt: skip
    memory = preflight(replace(info, free_storage_mb=None), need.model_bytes, floor_bytes=need.floor_bytes)
    ram = f"{info.ram_mb:.0f} MB RAM" if info.ram_mb else "RAM unknown"
    out.append(Check("memory", not memory, memory or ram, "choose a smaller model or a phone with more RAM"))
    return tuple(out)
