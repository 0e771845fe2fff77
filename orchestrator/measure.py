"""Measurement discipline: `--warmup K` and `--repeat N`.

The job a device runs is: K warm-up samples (the first K of its samples, run and never counted),
then its samples N times over, pass after pass. The FIRST pass is the sample's row: it is scored
and it is what results.jsonl holds. Every pass (the first included) is a latency measurement: the
device's figures (TTFT, prefill/decode speed, wall) are then distributions over N runs per sample,
and the report says so. Copies carry their own ids (`ID@r2`, `ID@warmup1`) so every runner keeps
them apart; they go to `repeats.jsonl` and `warmup.jsonl` in the device folder. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from android_runner.contract import SampleResult

from .datasets.types import Sample

REPEAT_MARK = "@r"
WARMUP_MARK = "@warmup"


def expand(samples: Sequence[Sample], repeat: int = 1, warmup: int = 0) -> tuple[Sample, ...]:
    """The job's samples: warm-ups, then pass 1 (the scored rows), then passes 2..N."""
    warm = [replace(samples[j % len(samples)], id=f"{samples[j % len(samples)].id}{WARMUP_MARK}{j + 1}")
            for j in range(warmup if samples else 0)]  # fmt: skip
    passes = [replace(s, id=f"{s.id}{REPEAT_MARK}{k}") for k in range(2, repeat + 1) for s in samples]
    return (*warm, *samples, *passes)


def measured_count(samples: int, repeat: int = 1, warmup: int = 0) -> int:
    return warmup + samples * repeat if samples else 0


def split(
    samples: Sequence[Sample], results: Sequence[SampleResult]
) -> tuple[list[SampleResult], list[SampleResult], list[SampleResult]]:
    """(scored rows in sample order, repeat rows, warm-up rows)."""
    ids = {s.id for s in samples}
    first = {r.id: r for r in results if r.id in ids}
    repeats = [r for r in results if r.id not in ids and REPEAT_MARK in r.id and WARMUP_MARK not in r.id]
    warm = [r for r in results if r.id not in ids and WARMUP_MARK in r.id]
    return [first[s.id] for s in samples if s.id in first], repeats, warm


def base_id(row_id: str) -> str:
    """The sample a copy measures (`ID@r3` -> `ID`)."""
    for mark in (WARMUP_MARK, REPEAT_MARK):
        head, sep, tail = row_id.rpartition(mark)
        if sep and tail.isdigit():
            return head
    return row_id


def describe(samples: int, repeat: int, warmup: int) -> str:
    """What the device's latency figures are over, for the report ('' for the plain one-run case)."""
    if repeat <= 1 and warmup <= 0:
        return ""
    runs = f"{samples * repeat} runs: {samples} samples x {repeat} (first run scored)" if repeat > 1 else \
        f"{samples} runs, one per sample"  # fmt: skip
    return runs + (f"; {warmup} warm-up run(s) not counted" if warmup else "")
