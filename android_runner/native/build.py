"""Build edgefarm's native runner (edgefarm_runner.c) and place the LiteRT-LM runtime library beside it.

- android: the NDK's clang for arm64 phones (`$ANDROID_NDK_HOME/toolchains/llvm/prebuilt/*/bin/
  aarch64-linux-android23-clang`), and `liblitert-lm.so` from the `android_23_arm64_v8a` wheel of
  litert-lm-api (fetched with pip), into build/android_arm64/;
- host: the host C compiler, against the installed litert-lm-api wheel's library (the device lab).
The program dlopens the library at run time and is compiled against the project's own declarations of
the C API (litert_lm_c_api.h). Every build checks them: each declared function must be exported by the
library the runner is pinned to (`check_exports`), and where upstream's c/engine.h is at hand
(`upstream_header`) api_check.c compiles both headers together, so a differing signature is a compile
error (`check_against_upstream`). Nothing is downloaded but the android wheel (from the package index).
The runner is built with the pinned library's sha256 (from the wheel's RECORD) and version, which it
checks at start. A `VERSION` file beside the library names the runtime's version.
Host-side only (never copied to a device).
"""

from __future__ import annotations

import base64
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

from android_runner.native import settings_header
from android_runner.runtime_pin import PINNED_VERSION, RUNTIME_DIST, RUNTIME_LIB

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "edgefarm_runner.c"
OTHER_SOURCES = ("api", "bench", "fidelity", "hook", "io", "job", "memory", "pin", "power", "reply", "sha256",
                 "stream", "text")  # fmt: skip
SOURCES = [SOURCE, *(HERE / f"{name}.c" for name in OTHER_SOURCES)]  # each NAME.c with its NAME.h
API_HEADER = HERE / "litert_lm_c_api.h"  # the project's own declarations of the C API it calls
API_CHECK = HERE / "api_check.c"  # compiled with upstream's header first, then ours
RUNNER = "edgefarm_runner"
CFLAGS = ["-O2", "-Wall", "-Wextra", "-Wshadow", "-Wconversion", "-std=c11"]
UPSTREAM_SRC_ENV = "EDGEFARM_LITERT_LM_SRC"  # a LiteRT-LM checkout, for the optional upstream check
_DECLARED = re.compile(r"\b(litert_lm_\w+)\s*\(")


class BuildError(RuntimeError):
    """The build cannot be made here; the message says what is missing and how to get it."""


def cache_root(env: dict[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env.get("EDGEFARM_CACHE_DIR") or Path.home() / ".cache" / "edgefarm")


def declared_functions(header_text: str) -> tuple[str, ...]:
    """The C API functions a header declares (every `litert_lm_*(`), in order, once each."""
    return tuple(dict.fromkeys(_DECLARED.findall(re.sub(r"/\*.*?\*/", "", header_text, flags=re.DOTALL))))


def missing_functions(lib: Path, names: tuple[str, ...]) -> list[str]:
    """Those of `names` that the shared library `lib` does not export as defined functions: looked up in
    its ELF symbol hash table (a 130 MB runtime has 200,000 dynamic symbols: a walk over all of them in
    Python takes minutes); any architecture's library, read without loading it."""
    from elftools.common.exceptions import ELFError  # lazy: every run imports this module for its constants
    from elftools.elf.elffile import ELFFile

    try:
        with open(lib, "rb") as f:
            elf = ELFFile(f)
            table = elf.get_section_by_name(".gnu.hash") or elf.get_section_by_name(".hash")
            if table is None:
                raise BuildError(f"{lib} has no dynamic symbol hash table: is it a shared library?")
            found = {name: table.get_symbol(name) for name in names}
            return [
                name for name, sym in found.items()
                if sym is None or sym["st_info"]["type"] != "STT_FUNC" or sym["st_shndx"] == "SHN_UNDEF"
            ]  # fmt: skip
    except (OSError, ELFError) as e:
        raise BuildError(f"cannot read the symbols of {lib}: {e}") from e


def check_exports(lib: Path, header: Path = API_HEADER) -> int:
    """Every function `header` declares is exported by `lib` (else BuildError naming them); the count."""
    declared = declared_functions(header.read_text(encoding="utf-8"))
    missing = missing_functions(lib, declared)
    if missing:
        raise BuildError(
            f"{lib} does not export {len(missing)} function(s) that {header.name} declares: {', '.join(missing)}\n"
            f"  fix: use the pinned {RUNTIME_DIST}=={PINNED_VERSION} library, or correct {header}"
        )
    return len(declared)


def upstream_header(env: dict[str, str] | None = None) -> Path | None:
    """Upstream's c/engine.h where one is at hand: `$EDGEFARM_LITERT_LM_SRC/c/engine.h` (which must exist
    when the variable is set), else `<cache>/litert-lm/c/engine.h`; else None. Never downloaded."""
    env = os.environ if env is None else env
    src = env.get(UPSTREAM_SRC_ENV)
    if src:
        header = Path(src) / "c" / "engine.h"
        if not header.is_file():
            raise BuildError(
                f"{UPSTREAM_SRC_ENV}={src} has no c/engine.h\n  fix: point it at a LiteRT-LM checkout"
            )
        return header
    cached = cache_root(env) / "litert-lm" / "c" / "engine.h"
    return cached if cached.is_file() else None


def check_against_upstream(cc: str, header: Path) -> None:
    """Compile api_check.c with upstream's `header` (and its c/conversation.h beside it, where a newer
    upstream declares the conversation functions) before ours: a differing declaration or enum value fails
    (BuildError with the compiler's words)."""
    # the checkout's root too: a newer upstream's c/conversation.h includes "c/engine.h"
    argv = [cc, "-std=c11", "-fsyntax-only", "-I", str(header.parent), "-I", str(header.parent.parent), "-I", str(HERE),
            str(API_CHECK)]  # fmt: skip
    p = subprocess.run(argv, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise BuildError(
            f"{API_HEADER.name} does not match upstream's {header}:\n{p.stderr[-2000:]}\n"
            f"  fix: correct the declaration in {API_HEADER} to upstream's (or use a checkout of the pinned version)"
        )


def record_sha256(record_text: str, name: str = RUNTIME_LIB) -> str:
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
    sha256 is `pinned_sha256` (the runner refuses another one at start unless --allow-runtime). Its
    settings keys, bounds and backends come from settings_gen.h, generated here from the Python record
    (settings_header.py) into a folder of this build's own."""
    out.parent.mkdir(parents=True, exist_ok=True)
    pins = [f'-DEF_PINNED_SHA256="{pinned_sha256}"', f'-DEF_PINNED_VERSION="{version}"']
    upstream = upstream_header()
    if upstream is not None:
        check_against_upstream(cc, upstream)
    with tempfile.TemporaryDirectory(prefix="edgefarm-generated-") as generated:
        settings_header.write(Path(generated))
        argv = [
            cc,
            *CFLAGS,
            *pins,
            *(extra or []),
            "-I",
            generated,
            "-o",
            str(out),
            *map(str, SOURCES),
            "-ldl",
            "-lpthread",
            "-lm",
        ]
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
    lib = Path(litert_lm.__file__).parent / RUNTIME_LIB
    if not lib.is_file():
        raise BuildError(f"{lib} is missing: reinstall litert-lm-api")
    return lib


def build_host(out_dir: Path, cc: str | None = None) -> tuple[Path, Path]:
    """The runner for this host (the device lab) and the installed wheel's library, in out_dir."""
    cc = cc or os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise BuildError("no C compiler: apt-get install gcc")
    runner = out_dir / RUNNER
    src = installed_runtime_lib()
    check_exports(src)
    compile_runner(cc, runner, installed_record_sha256(), version=metadata.version(RUNTIME_DIST))
    lib = out_dir / RUNTIME_LIB
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
    found = sorted(
        glob.glob(os.path.join(ndk, "toolchains/llvm/prebuilt/*/bin/aarch64-linux-android23-clang"))
    )
    if not found:
        raise BuildError(
            f"no aarch64-linux-android23-clang under {ndk}/toolchains/llvm/prebuilt: is it an NDK?"
        )
    return found[-1]


def android_runtime_lib(out_dir: Path, version: str) -> tuple[Path, str]:
    """liblitert-lm.so from the android_23_arm64_v8a wheel (pip downloads it)."""
    with tempfile.TemporaryDirectory() as tmp:
        argv = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--platform",
                "android_23_arm64_v8a", "--python-version", "3.13", "-d", tmp, f"{RUNTIME_DIST}=={version}"]  # fmt: skip
        p = subprocess.run(argv, capture_output=True, text=True, check=False)
        wheels = list(Path(tmp).glob("*.whl"))
        if p.returncode != 0 or not wheels:
            raise BuildError(
                f"cannot download the android wheel of {RUNTIME_DIST}=={version}:\n{p.stderr[-1500:]}"
            )
        return extract_runtime_lib(wheels[0], out_dir, version)


def extract_runtime_lib(wheel: Path, out_dir: Path, version: str) -> tuple[Path, str]:
    """liblitert-lm.so out of a litert-lm-api wheel (any platform's) into out_dir, with VERSION; and its
    sha256 from the wheel's RECORD (checked against the bytes extracted). It must export every function
    the runner declares."""
    with zipfile.ZipFile(wheel) as whl:
        name = next((n for n in whl.namelist() if n.endswith("/" + RUNTIME_LIB)), None)
        if name is None:
            raise BuildError(f"{wheel.name} has no {RUNTIME_LIB}")
        record = next((n for n in whl.namelist() if n.endswith(".dist-info/RECORD")), None)
        pinned = record_sha256(whl.read(record).decode("utf-8")) if record else ""
        out_dir.mkdir(parents=True, exist_ok=True)
        with whl.open(name) as src, open(out_dir / RUNTIME_LIB, "wb") as dst:
            shutil.copyfileobj(src, dst)
    (out_dir / "VERSION").write_text(f"{RUNTIME_DIST} {version} ({wheel.name})\n", encoding="utf-8")
    got = hashlib.sha256((out_dir / RUNTIME_LIB).read_bytes()).hexdigest()
    if pinned and got != pinned:
        raise BuildError(
            f"{RUNTIME_LIB} in {wheel.name} does not match its RECORD (sha256 {got}, RECORD {pinned})"
        )
    check_exports(out_dir / RUNTIME_LIB)
    return out_dir / RUNTIME_LIB, got


def build_android(out_dir: Path, ndk: str | None = None) -> tuple[Path, Path]:
    cc = ndk_clang(ndk or os.environ.get("ANDROID_NDK_HOME"))
    version = metadata.version(RUNTIME_DIST)
    lib, pinned = android_runtime_lib(out_dir, version)
    runner = out_dir / RUNNER
    compile_runner(cc, runner, pinned, ["-fPIE", "-pie"], version=version)
    return runner, lib
