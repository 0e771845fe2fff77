"""Builds the lab's wrapping runtimes (noisy_runtime.c, gpu_runtime.c, drip_runtime.c): a liblitert-lm.so compiled from
one of them over the REAL library, which sits beside it as liblitert-lm-real.so (its DT_NEEDED, rpath
$ORIGIN), with the real library's VERSION. A phone is given it by devices.yaml `runtime_lib` + `libs`."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from android_runner.native.build import API_HEADER


def wrapped_runtime(folder: Path, real_lib: Path, source: Path, *defines: str) -> Path:
    folder.mkdir(parents=True)
    try:
        os.link(real_lib, folder / "liblitert-lm-real.so")
    except OSError:
        shutil.copyfile(real_lib, folder / "liblitert-lm-real.so")
    shutil.copyfile(real_lib.parent / "VERSION", folder / "VERSION")
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or "cc"
    # --no-as-needed: the wrapper reaches the real library by dlsym only, so the linker would drop it
    argv = [cc, "-O1", "-fPIC", "-shared", "-I", str(API_HEADER.parent), *(f"-D{d}" for d in defines), "-o",
            str(folder / "liblitert-lm.so"), str(source), "-L", str(folder), "-Wl,--no-as-needed",
            "-l:liblitert-lm-real.so", "-Wl,-rpath,$ORIGIN", "-ldl", "-lm"]  # fmt: skip
    p = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    return folder / "liblitert-lm.so"


GPU = Path(__file__).resolve().parent / "gpu_runtime.c"


def gpu_runtime(folder: Path, real_lib: Path, flips: int, of: int, seed: int) -> Path:
    """liblitert-lm.so whose gpu backend is the real CPU engine with `flips` of the first `of` replies
    turned (gpu_runtime.c; 0: an unperturbed GPU path), over the real library as liblitert-lm-real.so."""
    return wrapped_runtime(folder, real_lib, GPU, f"FLIPS={flips}", f"OF={of}", f"SEED={seed}")
