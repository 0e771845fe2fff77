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

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

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


def expand_resumed(
    samples: Sequence[Sample], repeat: int, warmup: int, sustain: int, finished: Collection[str]
) -> tuple[Sample, ...]:
    """A resumed session's job: the earlier sessions' warm-ups (finished, kept as rows), then, when any
    measured run is left, `warmup` NEW warm-ups (a new session starts cold: it warms up again, numbered
    after the earlier ones), then every pass; the runner skips the ids already finished."""
    earlier = sum(1 for i in finished if WARMUP_MARK in i)
    measured = expand(samples, repeat, 0, sustain)
    left = any(s.id not in finished for s in measured)
    return (*expand(samples, 1, earlier + (warmup if left else 0))[: earlier + (warmup if left else 0)],
            *measured)  # fmt: skip


def measured_count(samples: int, repeat: int = 1, warmup: int = 0, sustain: int = 1) -> int:
    return warmup + samples * repeat * sustain if samples else 0


def count_unit(samples: int, runs: int) -> str:
    """What a device's progress counts: "samples", or "runs" when a sample runs more than once."""
    return "samples" if runs == samples else "runs"


@dataclass(frozen=True)
class Tally:
    """How much of a device's job is finished, in the unit it counts: samples, or runs when a sample
    runs more than once (--repeat / --sustain). What an interrupted run says and a resume finishes."""

    samples: int
    passes: int  # runs per sample: repeat x sustain
    done: int  # measured runs finished (warm-ups not counted)
    complete: int  # samples with every pass finished
    warmups: int  # warm-up runs finished (not counted)

    @classmethod
    def of(cls, samples: Sequence[Sample], repeat: int, sustain: int, finished: Collection[str]) -> Tally:
        ids = set(finished)
        runs = {s.id: [c.id for c in expand([s], repeat, 0, sustain)] for s in samples}
        done = sum(1 for copies in runs.values() for i in copies if i in ids)
        complete = sum(1 for copies in runs.values() if all(i in ids for i in copies))
        return cls(len(samples), repeat * sustain, done, complete, sum(1 for i in ids if WARMUP_MARK in i))

    @property
    def asked(self) -> int:
        return self.samples * self.passes

    @property
    def left(self) -> int:
        return self.asked - self.done

    @property
    def unit(self) -> str:
        return count_unit(self.samples, self.asked)

    def text(self) -> str:
        """`592 of 1,200 runs (40 samples x 30 runs; 12 samples have all 30)`, `20 of 40 samples`."""
        if self.passes == 1:
            return f"{self.done:,} of {self.asked:,} samples"
        return (f"{self.done:,} of {self.asked:,} runs ({self.samples:,} samples x {self.passes} runs; "
                f"{self.complete:,} samples have all {self.passes})")  # fmt: skip


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


def describe(samples: int, repeat: int, warmup: int, sustain: int = 1, runs: int | None = None) -> str:
    """What the device's latency figures are over, for the report ('' for the plain one-run case).
    `runs`: the measured runs the device has (an interrupted run's are fewer than were asked: said)."""
    if repeat <= 1 and warmup <= 0 and sustain <= 1:
        return ""
    asked = samples * max(repeat, sustain)
    done = f"{runs} of {asked} runs" if runs is not None and runs != asked else f"{asked} runs"
    if sustain > 1:
        text = f"{done}: {samples} samples x {sustain} back-to-back passes, no cooldown (first pass scored)"
    elif repeat > 1:
        text = f"{done}: {samples} samples x {repeat} (first run scored)"
    else:
        text = f"{done}, one per sample"
    return text + (f"; {warmup} warm-up run(s) not counted" if warmup else "")


__all__ = ["REPEAT_MARK", "SUSTAIN_MARK", "WARMUP_MARK", "Tally", "base_id", "count_unit", "describe", "expand",
           "expand_resumed", "measured_count", "split", "sustain_pass"]  # fmt: skip
