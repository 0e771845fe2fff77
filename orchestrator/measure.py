"""Measurement discipline: `--warmup K`, `--repeat N` and `--sustain N`.

The job a device runs is: K warm-up samples (the first K of its samples, run and never counted),
then its samples N times over, pass after pass. The FIRST pass is the sample's row: it is scored
and it is what results.jsonl holds. Every pass (the first included) is a latency measurement: the
device's figures (TTFT, prefill/decode speed, wall) are then distributions over N runs per sample,
and the report says so. Copies carry their own ids (`ID@r2`, `ID@s2`, `ID@warmup1`) so every runner
keeps them apart (the marks are the runner contract's: android_runner/contract.py); they go to
`repeats.jsonl` and `warmup.jsonl` in the device folder.
`--sustain N` is the same N passes run back to back WITHOUT cooldown, each row marked with its
`sustain_pass` (1..N), so the report can follow the speed as the phone heats (orchestrator/sustain.py).
Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from android_runner.contract import REPEAT_MARK, SUSTAIN_MARK, WARMUP_MARK, SampleResult, sustain_pass

from .datasets.types import Sample


def expand(
    samples: Sequence[Sample], repeat: int = 1, warmup: int = 0, sustain: int = 1
) -> tuple[Sample, ...]:
    """The job's samples: warm-ups, then pass 1 (the scored rows), then passes 2..N (--repeat or --sustain)."""
    warm = [replace(samples[j % len(samples)], id=f"{samples[j % len(samples)].id}{WARMUP_MARK}{j + 1}")
            for j in range(warmup if samples else 0)]  # fmt: skip
    passes = [replace(s, id=f"{s.id}{REPEAT_MARK}{k}") for k in range(2, repeat + 1) for s in samples]
    passes += [replace(s, id=f"{s.id}{SUSTAIN_MARK}{k}") for k in range(2, sustain + 1) for s in samples]
    return (*warm, *samples, *passes)


def measured_count(samples: int, repeat: int = 1, warmup: int = 0, sustain: int = 1) -> int:
    return warmup + samples * repeat * sustain if samples else 0


def count_unit(samples: int, runs: int) -> str:
    """What a device's progress counts: "samples", or "runs" when a sample runs more than once."""
    return "samples" if runs == samples else "runs"


def split(
    samples: Sequence[Sample], results: Sequence[SampleResult]
) -> tuple[list[SampleResult], list[SampleResult], list[SampleResult]]:
    """(scored rows in sample order, repeat rows, warm-up rows). --sustain copies are repeat rows; with
    them, every row carries its `sustain_pass` (the scored ones: 1)."""
    ids = {s.id for s in samples}
    first = {r.id: r for r in results if r.id in ids}
    repeats = [r for r in results if r.id not in ids and WARMUP_MARK not in r.id
               and (REPEAT_MARK in r.id or sustain_pass(r.id))]  # fmt: skip
    warm = [r for r in results if r.id not in ids and WARMUP_MARK in r.id]
    if any(sustain_pass(r.id) for r in repeats):
        repeats = [replace(r, sustain_pass=sustain_pass(r.id)) for r in repeats]
        first = {k: replace(r, sustain_pass=1) for k, r in first.items()}
    return [first[s.id] for s in samples if s.id in first], repeats, warm


def base_id(row_id: str) -> str:
    """The sample a copy measures (`ID@r3` -> `ID`, `ID@s2` -> `ID`)."""
    for mark in (WARMUP_MARK, REPEAT_MARK, SUSTAIN_MARK):
        head, sep, tail = row_id.rpartition(mark)
        if sep and tail.isdigit():
            return head
    return row_id


def describe(samples: int, repeat: int, warmup: int, sustain: int = 1) -> str:
    """What the device's latency figures are over, for the report ('' for the plain one-run case)."""
    if repeat <= 1 and warmup <= 0 and sustain <= 1:
        return ""
    if sustain > 1:
        runs = f"{samples * sustain} runs: {samples} samples x {sustain} back-to-back passes, no cooldown (first pass scored)"
    elif repeat > 1:
        runs = f"{samples * repeat} runs: {samples} samples x {repeat} (first run scored)"
    else:
        runs = f"{samples} runs, one per sample"
    return runs + (f"; {warmup} warm-up run(s) not counted" if warmup else "")


__all__ = ["REPEAT_MARK", "SUSTAIN_MARK", "WARMUP_MARK", "base_id", "count_unit", "describe", "expand",
           "measured_count", "split", "sustain_pass"]  # fmt: skip
