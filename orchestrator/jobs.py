"""A dataset slice -> the on-device job bundle (job.jsonl + media/), per android_runner/contract.py.

Media are copied under neutral names (`media/<n>-<k>.<ext>`): file names from a dataset never reach
a device or a command line, and nothing outside the dataset folder is read (the loader checked).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from android_runner.contract import FIDELITY_TARGET_MAX_CHARS, FidelityAsk, JobItem, JobPart
from android_runner.status import DEFAULT_MAX_OUTPUT_TOKENS

from .datasets.types import Constraint, Sample
from .fsutil import make_dir, place_file, write_text_atomic
from .interrupt import raise_if_set


@dataclass(frozen=True)
class JobOptions:
    max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS
    override: bool = False  # True: max_output_tokens applies to every row, even rows that set their own
    sampler: Mapping[str, Any] | None = None  # None: greedy (top_k=1, seed 0)
    # sample id -> why the host refuses to send it (plan.refused_samples): its JobItem carries the
    # reason and no turns or media, and the runner records it as an `error` row without running it
    refused: Mapping[str, str] = field(default_factory=dict)
    fidelity: bool = False  # --fidelity: each item asks for the scoring pass (fidelity_ask)


def fidelity_ask(s: Sample) -> FidelityAsk:
    """What a device scores for sample `s` under --fidelity (docs/fidelity.md): its reference, teacher-
    forced after its prompt text (the system message, then the turn's text), on one-turn text samples.
    The runtime's session prefill that every runner can feed is text: a sample with media, or whose later
    turns follow answers that differ per device, is not scored, and says why."""
    if not s.reference.strip():
        return FidelityAsk(skip="no reference answer to score")
    if s.media:
        return FidelityAsk(
            skip="the prompt has media: the scoring pass prefills text only (docs/fidelity.md)"
        )
    if len(s.turns) != 1:
        return FidelityAsk(skip="several turns: the later turns follow answers that differ per device")
    # an empty prompt prefills nothing: the reference is scored from the session's start (the runtime
    # refuses an empty prefill; lm-eval's rolling log-likelihood, docs/lmeval.md)
    prefill = tuple(t for t in (s.system or "", s.turns[0].text) if t)
    return FidelityAsk(target=s.reference[:FIDELITY_TARGET_MAX_CHARS], prefill=prefill)


def _constraint_json(c: Constraint | None) -> dict[str, Any] | None:
    if c is None:
        return None
    d: dict[str, Any] = {"type": c.type}
    if c.schema is not None:
        d["schema"] = c.schema
    if c.pattern is not None:
        d["pattern"] = c.pattern
    if c.grammar is not None:
        d["grammar"] = c.grammar
    return d


def job_items(
    samples: Sequence[Sample],
    opts: JobOptions,
    media_dir: Path | None = None,
    stop: threading.Event | None = None,
) -> list[JobItem]:
    """Build the JobItems; with media_dir, also place each media file there under its neutral name
    (once per file: the copies --repeat makes of a sample share their media). `stop` (Ctrl-C) ends it."""
    items = []
    sampler = dict(opts.sampler) if opts.sampler else {"top_k": 1, "seed": 0}
    placed: dict[Path, str] = {}  # a dataset file -> its neutral name in the bundle
    for n, s in enumerate(samples):
        raise_if_set(stop)
        if s.id in opts.refused:
            items.append(JobItem(id=s.id, turns=(), refused=opts.refused[s.id], sampler=sampler))
            continue
        turns = []
        k = 0
        for turn in s.turns:
            parts = []
            for p in turn.parts:
                if p.kind == "text":
                    parts.append(JobPart("text", text=p.text))
                    continue
                k += 1
                if p.path is not None and p.path in placed:
                    parts.append(JobPart(p.kind, path=placed[p.path]))
                    continue
                suffix = (p.path.suffix.lower() if p.path else "")[:8]
                rel = f"media/{n:04d}-{k}{suffix}"
                if media_dir is not None and p.path is not None:
                    place_file(p.path, media_dir.parent / rel)
                    placed[p.path] = rel
                parts.append(JobPart(p.kind, path=rel))
            turns.append(tuple(parts))
        items.append(
            JobItem(
                id=s.id,
                turns=tuple(turns),
                system=s.system,
                tools=tuple(s.tools),
                constraint=_constraint_json(s.constraint),
                max_output_tokens=opts.max_output_tokens
                if opts.override
                else (s.max_output_tokens or opts.max_output_tokens),
                sampler=sampler,
                bench=s.bench,
                fidelity=fidelity_ask(s) if opts.fidelity else None,
            )
        )
    return items


def write_bundle(
    samples: Sequence[Sample], folder: Path, opts: JobOptions, stop: threading.Event | None = None
) -> list[JobItem]:
    """Write `folder/job.jsonl` and `folder/media/`; returns the items written. `stop` ends it at the next
    item, while the items are made and while they are written as lines (at the 100,000-run bound each
    takes seconds: a stop checked only while making them left the lines' half of staging deaf to it)."""
    media = make_dir(folder / "media")
    items = job_items(samples, opts, media_dir=media, stop=stop)
    write_text_atomic(folder / "job.jsonl", "".join(_lines(items, stop)))
    return items


def _lines(items: Sequence[JobItem], stop: threading.Event | None) -> Iterator[str]:
    for it in items:
        raise_if_set(stop)
        yield it.to_json() + "\n"
