"""Build edgefarm's native runner (edgefarm_runner.c) and place the LiteRT-LM runtime library beside it.

- android: the NDK's clang for arm64 phones (`$ANDROID_NDK_HOME/toolchains/llvm/prebuilt/*/bin/
  aarch64-linux-android23-clang`), and `liblitert-lm.so` from the `android_23_arm64_v8a` wheel of
  litert-lm-api (fetched with pip), into build/android_arm64/;
- host: the host C compiler, against the installed litert-lm-api wheel's library (the device lab).
The program dlopens the library at run time but is compiled against upstream's own C header
(`c/engine.h` of google-ai-edge/LiteRT-LM at UPSTREAM_HEADER_COMMIT, checked by its sha256; see
`upstream_header_dir`), and with the pinned library's sha256 (from the wheel's RECORD) and version,
which it checks at start. A `VERSION` file beside the library names the runtime's version.
Host-side only (never copied to a device).
"""

from __future__ import annotations

import base64
import glob
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "edgefarm_runner.c"
SOURCES = [SOURCE, HERE / "job.c", HERE / "reply.c", HERE / "text.c", HERE / "sha256.c"]
RUNNER = "edgefarm_runner"
LIB = "liblitert-lm.so"
RUNTIME_DIST = "litert-lm-api"
PINNED_VERSION = "0.18.1"  # pyproject.toml's litert-lm-api pin: the runner refuses any other library
CFLAGS = ["-O2", "-Wall", "-Wextra", "-Wshadow", "-Wconversion", "-std=c11"]
# Upstream's C header, never copied into this repository: the build reads it from a local LiteRT-LM
# checkout (EDGEFARM_LITERT_LM_SRC), else the cache folder, else downloads it at this commit; the sha256
# is of the file at that commit. No 0.18.1 tag was reachable when this was pinned (the snapshots' tags end
# at v0.6.1): this is the newest commit of c/engine.h found, and every function it declares is exported
# by the 0.18.1 library (the library exports 93 more, none of which the runner uses). docs/android.md.
UPSTREAM_HEADER_COMMIT = "0544937db805fb9cc9a64e8a196b71251d272c8b"
UPSTREAM_HEADER_SHA256 = "78ad351316342ef3b3174eb9f1073b695b264c7eb8b0334044886445de8ad956"
UPSTREAM_HEADER_URL = f"https://raw.githubusercontent.com/google-ai-edge/LiteRT-LM/{UPSTREAM_HEADER_COMMIT}/c/engine.h"


class BuildError(RuntimeError):
    """The build cannot be made here; the message says what is missing and how to get it."""


def cache_root(env: dict[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env.get("EDGEFARM_CACHE_DIR") or Path.home() / ".cache" / "edgefarm")


def upstream_header_dir(env: dict[str, str] | None = None) -> Path:
    """A folder holding upstream's `engine.h` at UPSTREAM_HEADER_COMMIT (sha256 checked), for `-I`."""
    env = os.environ if env is None else env
    src = env.get("EDGEFARM_LITERT_LM_SRC")
    folder = Path(src) / "c" if src else cache_root(env) / "litert-lm" / UPSTREAM_HEADER_COMMIT / "c"
    header = folder / "engine.h"
    if not header.is_file() and not src:
        try:
            with urllib.request.urlopen(UPSTREAM_HEADER_URL, timeout=30) as r:
                data = r.read(1 << 20)
            if hashlib.sha256(data).hexdigest() == UPSTREAM_HEADER_SHA256:
                folder.mkdir(parents=True, exist_ok=True)
                header.write_bytes(data)
        except OSError:
            pass
    fix = (f"put LiteRT-LM's c/engine.h at commit {UPSTREAM_HEADER_COMMIT} at {header} ({UPSTREAM_HEADER_URL}), "
           "or point EDGEFARM_LITERT_LM_SRC at a LiteRT-LM checkout of that commit")  # fmt: skip
    if not header.is_file():
        raise BuildError(f"upstream's C header is missing: {header}\n  fix: {fix}")
    got = hashlib.sha256(header.read_bytes()).hexdigest()
    if got != UPSTREAM_HEADER_SHA256:
        raise BuildError(f"{header} is not c/engine.h at {UPSTREAM_HEADER_COMMIT[:12]} (sha256 {got})\n  fix: {fix}")
    return folder


def record_sha256(record_text: str, name: str = LIB) -> str:
    """The hex sha256 of `name` in a wheel's RECORD (`path,sha256=<urlsafe b64>,size`)."""
    for line in record_text.splitlines():
        path, _, rest = line.partition(",")
        if path.endswith("/" + name) and rest.startswith("sha256="):
            digest = rest.split(",")[0][len("sha256=") :]
            return base64.urlsafe_b64decode(digest + "=" * (-len(digest) % 4)).hex()
    raise BuildError(f"the wheel's RECORD lists no sha256 for {name}: reinstall {RUNTIME_DIST}")


def compile_runner(cc: str, out: Path, pinned_sha256: str, extra: list[str] | None = None,
                   version: str = PINNED_VERSION) -> Path:  # fmt: skip
    """Compile the runner with `cc` (host, NDK or cross compiler) into `out`, pinned to the library whose
    sha256 is `pinned_sha256` (the runner refuses another one at start unless --allow-runtime)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    pins = [f'-DEF_PINNED_SHA256="{pinned_sha256}"', f'-DEF_PINNED_VERSION="{version}"']
    argv = [cc, *CFLAGS, *pins, "-I", str(upstream_header_dir()), *(extra or []), "-o", str(out),
            *map(str, SOURCES), "-ldl", "-lpthread", "-lm"]  # fmt: skip
    p = subprocess.run(argv, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise BuildError(f"compiling {SOURCE.name} with {cc} failed:\n{p.stderr[-2000:]}")
    return out


def installed_record_sha256() -> str:
    """The library's sha256 as the installed wheel's RECORD states it."""
    record = metadata.distribution(RUNTIME_DIST).read_text("RECORD") or ""
    return record_sha256(record)


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
    compile_runner(cc, runner, installed_record_sha256(), version=metadata.version(RUNTIME_DIST))
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


def android_runtime_lib(out_dir: Path, version: str) -> tuple[Path, str]:
    """liblitert-lm.so from the android_23_arm64_v8a wheel (pip downloads it)."""
    with tempfile.TemporaryDirectory() as tmp:
        argv = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--platform",
                "android_23_arm64_v8a", "--python-version", "3.13", "-d", tmp, f"{RUNTIME_DIST}=={version}"]  # fmt: skip
        p = subprocess.run(argv, capture_output=True, text=True, check=False)
        wheels = list(Path(tmp).glob("*.whl"))
        if p.returncode != 0 or not wheels:
            raise BuildError(f"cannot download the android wheel of {RUNTIME_DIST}=={version}:\n{p.stderr[-1500:]}")
        return extract_runtime_lib(wheels[0], out_dir, version)


def extract_runtime_lib(wheel: Path, out_dir: Path, version: str) -> tuple[Path, str]:
    """liblitert-lm.so out of a litert-lm-api wheel (any platform's) into out_dir, with VERSION; and its
    sha256 from the wheel's RECORD (checked against the bytes extracted)."""
    with zipfile.ZipFile(wheel) as whl:
        name = next((n for n in whl.namelist() if n.endswith("/" + LIB)), None)
        if name is None:
            raise BuildError(f"{wheel.name} has no {LIB}")
        record = next((n for n in whl.namelist() if n.endswith(".dist-info/RECORD")), None)
        pinned = record_sha256(whl.read(record).decode("utf-8")) if record else ""
        out_dir.mkdir(parents=True, exist_ok=True)
        with whl.open(name) as src, open(out_dir / LIB, "wb") as dst:
            shutil.copyfileobj(src, dst)
    (out_dir / "VERSION").write_text(f"{RUNTIME_DIST} {version} ({wheel.name})\n", encoding="utf-8")
    got = hashlib.sha256((out_dir / LIB).read_bytes()).hexdigest()
    if pinned and got != pinned:
        raise BuildError(f"{LIB} in {wheel.name} does not match its RECORD (sha256 {got}, RECORD {pinned})")
    return out_dir / LIB, got


def build_android(out_dir: Path, ndk: str | None = None) -> tuple[Path, Path]:
    cc = ndk_clang(ndk or os.environ.get("ANDROID_NDK_HOME"))
    version = metadata.version(RUNTIME_DIST)
    lib, pinned = android_runtime_lib(out_dir, version)
    runner = out_dir / RUNNER
    compile_runner(cc, runner, pinned, ["-fPIE", "-pie"], version=version)
    return runner, lib
