"""Upper bounds on every count, size and time a user gives `edgefarm run` (issue 34). Pure.

`--repeat 1000000000` kept the controller staging for ten minutes while it grew to 12 GB, and one typo
(`--repeat 30000`) could take down a shared controller. Each flag has a ceiling (FLAG_BOUNDS, the same as
the phone runner's own where it has one: android_runner/native/edgefarm_runner.c), checked when the
flags are read; what the job of a device would hold (runs, prompt text) is checked against the
selected samples before any file is staged. docs/reliability.md lists them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..datasets.types import Sample
from ..errors import ConfigError
from ..measure import measured_count
from .selection import prompt_bytes

MAX_RUNS_PER_DEVICE = 100_000  # job lines a device gets (warm-ups + samples x repeat x sustain)
MAX_JOB_TEXT_BYTES = 256 * 2**20  # prompt text in a device's job, every pass counted
MAX_SAMPLES = 1_000_000  # --limit / --per-modality (the phone runner numbers at most 1,000,000 samples)
MAX_SUSTAIN_PASSES = 100  # --sustain (run and bench)


@dataclass(frozen=True)
class Bound:
    flag: str
    field: str  # RunRequest's
    least: float
    most: float
    why: str  # where the ceiling comes from


FLAG_BOUNDS = (
    Bound("--limit", "limit", 1, MAX_SAMPLES, "the phone runner numbers at most 1,000,000 samples"),
    Bound(
        "--per-modality", "per_modality", 1, MAX_SAMPLES, "the phone runner numbers at most 1,000,000 samples"
    ),
    Bound("--repeat", "repeat", 1, 1000, "1000 runs of a sample measure its latency to well under 1%"),
    Bound("--warmup", "warmup", 0, 1000, "a runtime is warm after a few samples"),
    Bound(
        "--sustain", "sustain", 1, MAX_SUSTAIN_PASSES, "a phone reaches its steady state within a few passes"
    ),
    Bound("--max-output-tokens", "max_output_tokens", 1, 10_000_000, "the phone runner's own ceiling"),
    Bound("--max-num-tokens", "max_num_tokens", 1, 10_000_000, "the phone runner's own ceiling"),
    Bound("--threads", "threads", 1, 256, "the phone runner's own ceiling"),
    Bound("--sample-timeout", "sample_timeout_s", 1, 86_400, "one day; the phone runner's own ceiling"),
    Bound("--cooldown-c", "cooldown_c", 0, 120, "no device runs above 120 °C"),
    Bound("--cooldown-max-s", "cooldown_max_s", 0, 3600, "a device that has not cooled in an hour will not"),
    Bound(
        "--fallback-wait-s", "fallback_wait_s", 0, 3600, "a phone not back within an hour is not coming back"
    ),
)


def check_flags(request: Any) -> None:
    """Every bounded flag of a RunRequest within its bound, and no two flags that contradict each other
    (a ConfigError naming the flag and the fix)."""
    if request.sustain > 1 and (request.repeat > 1 or request.cooldown_c is not None):
        raise ConfigError(
            "--sustain runs its passes back to back without cooldown; --repeat and --cooldown-c do not",
            where="--sustain",
            fix="drop --repeat and --cooldown-c, or drop --sustain",
        )
    if request.reference is not None and not request.fidelity:
        raise ConfigError("--reference names the device --fidelity measures against, without --fidelity",
                          where="--reference", fix="add --fidelity, or drop --reference")  # fmt: skip
    for b in FLAG_BOUNDS:
        value = getattr(request, b.field)
        if value is None:
            continue
        if not math.isfinite(value) or not b.least <= value <= b.most:
            raise ConfigError(
                f"{b.flag} {value} is outside {b.least:g}..{b.most:g} ({b.why})",
                where=b.flag,
                fix=f"pass {b.flag} between {b.least:g} and {b.most:g}",
            )


def check_job(samples: Sequence[Sample], repeat: int, warmup: int, sustain: int) -> None:
    """What one device's job would hold (runs, prompt text over every pass) within MAX_RUNS_PER_DEVICE
    and MAX_JOB_TEXT_BYTES, so staging a job takes bounded memory, disk and time."""
    runs = measured_count(len(samples), repeat, warmup, sustain)
    passes = repeat * sustain
    flag = "--sustain" if sustain > 1 else "--repeat"
    if runs > MAX_RUNS_PER_DEVICE:
        most = max(1, (MAX_RUNS_PER_DEVICE - warmup) // max(1, len(samples)))
        raise ConfigError(
            f"{len(samples)} samples x {passes} passes + {warmup} warm-up(s) is {runs:,} runs per device; "
            f"edgefarm stages at most {MAX_RUNS_PER_DEVICE:,}",
            where=flag,
            fix=f"pass {flag} {min(most, passes)} or less for these samples, or select fewer samples (--limit)",
        )
    text = sum(prompt_bytes(s) for s in samples)
    if text * passes + text * warmup // max(1, len(samples)) > MAX_JOB_TEXT_BYTES:
        raise ConfigError(
            f"{passes} passes over {text:,} bytes of prompt text would make a job of over "
            f"{MAX_JOB_TEXT_BYTES // 2**20} MiB per device",
            where=flag,
            fix=f"pass {flag} {max(1, MAX_JOB_TEXT_BYTES // max(1, text))} or less, or select fewer samples (--limit)",
        )
