"""The native runner built on its own for unit tests: -fsanitize=address,undefined, against a small fake
liblitert-lm.so (fake_litert_lm.c, the same litert_lm_c_api.h) whose sha256 the runner is pinned to.

Built once per source hash into a folder under the system temp dir, so a session (or the next one)
reuses it: the build takes a few seconds, the tests then run the binary directly."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from android_runner.native import settings_header
from android_runner.native.build import API_HEADER, CFLAGS, PINNED_VERSION, SOURCES, check_exports

HERE = Path(__file__).resolve().parent
FAKE = HERE / "fake_litert_lm.c"
SANITIZE = [
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=undefined",
    "-fno-omit-frame-pointer",
    "-g",
]


@dataclass(frozen=True)
class NativeBuild:
    runner: Path  # the sanitizer build, pinned to `lib`
    lib: Path  # the fake runtime library (a VERSION file beside it names the pinned version)
    other_lib: Path  # the same fake library with one byte more: not the pinned one
    lib_sha256: str


def _cc() -> str:
    cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
    if not cc:
        pytest.fail("no C compiler: apt-get install gcc (the native runner's unit tests build it)")
    return cc


def _run(argv: list[str]) -> None:
    p = subprocess.run(argv, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        pytest.fail(f"build failed: {' '.join(argv)}\n{p.stderr[-3000:]}")


@pytest.fixture(scope="session")
def cc() -> str:
    """The host's C compiler (a test fails, naming the package, without one)."""
    return _cc()


@pytest.fixture(scope="session")
def native_build() -> NativeBuild:
    header = API_HEADER.parent
    digest = hashlib.sha256()
    for f in (*SOURCES, *sorted(SOURCES[0].parent.glob("*.h")), FAKE):
        digest.update(f.read_bytes())
    digest.update(" ".join(CFLAGS + SANITIZE).encode())
    digest.update(settings_header.render().encode())  # the generated header: a bound changed rebuilds
    out = Path(tempfile.gettempdir()) / f"edgefarm-native-tests-{digest.hexdigest()[:16]}"
    built = NativeBuild(
        out / "edgefarm_runner", out / "lib" / "liblitert-lm.so", out / "other" / "liblitert-lm.so", ""
    )
    stamp = out / "lib.sha256"
    if not stamp.is_file():
        tmp = Path(tempfile.mkdtemp(prefix="edgefarm-native-build-"))
        cc = _cc()
        (tmp / "lib").mkdir()
        (tmp / "other").mkdir()
        lib = tmp / "lib" / "liblitert-lm.so"
        _run(
            [
                cc,
                "-O1",
                "-g",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-fPIC",
                "-shared",
                "-I",
                str(header),
                "-o",
                str(lib),
                str(FAKE),
            ]
        )
        check_exports(lib)  # the stand-in offers every function the runner declares
        sha = hashlib.sha256(lib.read_bytes()).hexdigest()
        for d in ("lib", "other"):
            (tmp / d / "VERSION").write_text(f"litert-lm-api {PINNED_VERSION} (fake library for tests)\n")
        (tmp / "other" / "liblitert-lm.so").write_bytes(lib.read_bytes() + b"\0")
        settings_header.write(tmp / "generated")  # as build.py does: from android_runner/settings.py
        _run([cc, *CFLAGS, "-Werror", *SANITIZE, "-DEF_TEST_HOOKS", f'-DEF_PINNED_SHA256="{sha}"',
              f'-DEF_PINNED_VERSION="{PINNED_VERSION}"', "-I", str(tmp / "generated"), "-o", str(tmp / "edgefarm_runner"),
              *map(str, SOURCES), "-ldl", "-lpthread", "-lm"])  # fmt: skip
        (tmp / "lib.sha256").write_text(sha)
        try:
            tmp.rename(out)
        except OSError:  # another session built it meanwhile
            shutil.rmtree(tmp, ignore_errors=True)
    return NativeBuild(built.runner, built.lib, built.other_lib, (out / "lib.sha256").read_text())
