"""The native phone runner's C source on aarch64, against the REAL aarch64 runtime library.

No NDK is installable here, so the Android build itself cannot run in this lab; what can: the same
source cross-compiled for aarch64 Linux (Debian's gcc-aarch64-linux-gnu), run under qemu-user
(emulated CPU pinned to cortex-a76) with the `manylinux_2_27_aarch64` wheel's liblitert-lm.so, on
one sample of every modality. Its answers must equal this host's (x86_64) native runner's for
greedy decoding. The aarch64 userland and the wheel come from the board lab's cached build.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from android_runner.conversation import job_file_text, render
from android_runner.native.build import build_host, compile_runner, extract_runtime_lib
from android_runner.settings import RunnerSettings
from orchestrator.datasets import BUNDLED_DATASET, load_dataset
from orchestrator.jobs import JobOptions, write_bundle
from orchestrator.models import BUNDLED_MODEL

from .ssh import aarch64

CROSS_CC = "aarch64-linux-gnu-gcc"


def _run(argv: list[str], lib: Path, job: Path, results: Path, env: dict[str, str] | None = None) -> dict[int, dict]:
    settings = results.with_suffix(".settings")
    settings.write_text(RunnerSettings(model=str(BUNDLED_MODEL), cache_dir=":nocache", vision_backend="cpu",
                                       audio_backend="cpu", threads=1, lib=str(lib)).render())  # fmt: skip
    flags = ["--settings", str(settings), "--job", str(job / "job.conv"), "--results", str(results),
             "--log-level", "3"]  # fmt: skip
    p = subprocess.run([*argv, *flags], capture_output=True, text=True, timeout=600, env=env, check=False)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.count("EDGEFARM READY") == 1  # one model load for the whole job
    return {d["n"]: d for d in map(json.loads, results.read_text().splitlines())}


def test_native_runner_on_aarch64_answers_as_on_this_host(tmp_path):
    if not shutil.which(CROSS_CC):
        pytest.fail(f"{CROSS_CC} is missing: apt-get install gcc-aarch64-linux-gnu (scripts/test.sh does)")
    try:
        top = aarch64.build()
    except aarch64.LabSetupError as e:
        pytest.fail(f"the aarch64 lab userland cannot be built here: {e}")
    wheel = next((top / "wheels").glob("*manylinux_2_27_aarch64.whl"))
    picked: dict[str, object] = {}
    for s in load_dataset(BUNDLED_DATASET).samples:
        picked.setdefault(s.modality, s)
    job = tmp_path / "job"
    items = write_bundle(list(picked.values()), job, JobOptions(max_output_tokens=16))
    (job / "job.conv").write_bytes(job_file_text([(n, render(it, str(job))) for n, it in enumerate(items, 1)]))

    host_runner, host_lib = build_host(tmp_path / "host")
    host = _run([str(host_runner)], host_lib, job, tmp_path / "host.jsonl")

    arm = tmp_path / "arm"
    lib, pinned = extract_runtime_lib(wheel, arm, "0.18.1")
    runner = compile_runner(CROSS_CC, arm / "edgefarm_runner", pinned)
    assert b"ARM aarch64" in subprocess.run(["file", str(runner)], capture_output=True, check=False).stdout or (
        runner.read_bytes()[18:20] == b"\xb7\x00"  # ELF e_machine EM_AARCH64
    )
    env = dict(os.environ, QEMU_CPU=aarch64.QEMU_CPU)  # pinned: qemu's default `max` CPU answers wrongly
    qemu = shutil.which(aarch64.QEMU) or aarch64.QEMU
    emulated = _run([qemu, "-L", str(top / "rootfs"), str(runner)], lib, job, arm / "r.jsonl", env)

    assert sorted(emulated) == sorted(host) == list(range(1, len(items) + 1))
    for n, row in emulated.items():
        assert row["status"] == "ok", row
        assert json.loads(row["response"]) == json.loads(host[n]["response"]), (items[n - 1].id, row, host[n])
        assert row["ttft_ms"] > 0 and row["peak_rss_kb"] > 10_000
