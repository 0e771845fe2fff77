"""Build edgefarm's native runner (edgefarm_runner.c) and place the LiteRT-LM runtime library beside it.

- android: the NDK's clang for arm64 phones (`$ANDROID_NDK_HOME/toolchains/llvm/prebuilt/*/bin/
  aarch64-linux-android23-clang`), and `liblitert-lm.so` from the `android_23_arm64_v8a` wheel of
  litert-lm-api (fetched with pip), into build/android_arm64/;
- host: the host C compiler, against the installed litert-lm-api wheel's library (the device lab).
The program dlopens the library at run time, so no LiteRT-LM header or link step is needed. A
`VERSION` file beside the library names the runtime's version for the run stamp.
Host-side only (never copied to a device).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

SOURCE = Path(__file__).resolve().parent / "edgefarm_runner.c"
RUNNER = "edgefarm_runner"
LIB = "liblitert-lm.so"
RUNTIME_DIST = "litert-lm-api"
CFLAGS = ["-O2", "-Wall", "-Wextra", "-std=c11"]


class BuildError(RuntimeError):
    """The build cannot be made here; the message says what is missing and how to get it."""


def compile_runner(cc: str, out: Path, extra: list[str] | None = None) -> Path:
    """Compile edgefarm_runner.c with `cc` (host, NDK or cross compiler) into `out`."""
    out.parent.mkdir(parents=True, exist_ok=True)
    argv = [cc, *CFLAGS, *(extra or []), "-o", str(out), str(SOURCE), "-ldl", "-lpthread"]
    p = subprocess.run(argv, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise BuildError(f"compiling {SOURCE.name} with {cc} failed:\n{p.stderr[-2000:]}")
    return out


def installed_runtime_lib() -> Path:
    """The runtime library inside the installed litert-lm-api wheel (this host's architecture)."""
    try:
        import litert_lm
    except ImportError as e:
        raise BuildError(f"litert-lm-api is not installed ({e}): pip install litert-lm-api") from e
    lib = Path(litert_lm.__file__).parent / LIB
    if not lib.is_file():
        raise BuildError(f"{lib} is missing: reinstall litert-lm-api")
    return lib


def build_host(out_dir: Path, cc: str | None = None) -> tuple[Path, Path]:
    """The runner for this host (the device lab) and the installed wheel's library, in out_dir."""
    cc = cc or os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise BuildError("no C compiler: apt-get install gcc")
    runner = out_dir / RUNNER
    compile_runner(cc, runner)
    lib = out_dir / LIB
    src = installed_runtime_lib()
    if not lib.exists() or lib.stat().st_size != src.stat().st_size:
        lib.unlink(missing_ok=True)
        try:
            os.link(src, lib)
        except OSError:
            shutil.copyfile(src, lib)
    version = metadata.version(RUNTIME_DIST)
    (out_dir / "VERSION").write_text(f"{RUNTIME_DIST} {version} ({sys.platform} wheel)\n", encoding="utf-8")
    return runner, lib


def ndk_clang(ndk: str | None) -> str:
    if not ndk:
        raise BuildError(
            "ANDROID_NDK_HOME is not set: install the Android NDK (r26 or newer) and point ANDROID_NDK_HOME at it"
        )
    found = sorted(glob.glob(os.path.join(ndk, "toolchains/llvm/prebuilt/*/bin/aarch64-linux-android23-clang")))
    if not found:
        raise BuildError(f"no aarch64-linux-android23-clang under {ndk}/toolchains/llvm/prebuilt: is it an NDK?")
    return found[-1]


def android_runtime_lib(out_dir: Path, version: str) -> Path:
    """liblitert-lm.so from the android_23_arm64_v8a wheel (pip downloads it)."""
    with tempfile.TemporaryDirectory() as tmp:
        argv = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--platform",
                "android_23_arm64_v8a", "--python-version", "3.13", "-d", tmp, f"{RUNTIME_DIST}=={version}"]  # fmt: skip
        p = subprocess.run(argv, capture_output=True, text=True, check=False)
        wheels = list(Path(tmp).glob("*.whl"))
        if p.returncode != 0 or not wheels:
            raise BuildError(f"cannot download the android wheel of {RUNTIME_DIST}=={version}:\n{p.stderr[-1500:]}")
        return extract_runtime_lib(wheels[0], out_dir, version)


def extract_runtime_lib(wheel: Path, out_dir: Path, version: str) -> Path:
    """liblitert-lm.so out of a litert-lm-api wheel (any platform's) into out_dir, with VERSION."""
    with zipfile.ZipFile(wheel) as whl:
        name = next((n for n in whl.namelist() if n.endswith("/" + LIB)), None)
        if name is None:
            raise BuildError(f"{wheel.name} has no {LIB}")
        out_dir.mkdir(parents=True, exist_ok=True)
        with whl.open(name) as src, open(out_dir / LIB, "wb") as dst:
            shutil.copyfileobj(src, dst)
    (out_dir / "VERSION").write_text(f"{RUNTIME_DIST} {version} ({wheel.name})\n", encoding="utf-8")
    return out_dir / LIB


def build_android(out_dir: Path, ndk: str | None = None) -> tuple[Path, Path]:
    cc = ndk_clang(ndk or os.environ.get("ANDROID_NDK_HOME"))
    runner = out_dir / RUNNER
    compile_runner(cc, runner, ["-fPIE", "-pie"])
    return runner, android_runtime_lib(out_dir, metadata.version(RUNTIME_DIST))
