"""The run's sample slice, the prompts refused before any device sees them, the dataset fingerprint."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from ..datasets.types import Dataset, Sample
from ..errors import ConfigError


def select_samples(
    dataset: Dataset,
    modalities: Sequence[str] = (),
    limit: int | None = None,
    per_modality: int | None = None,
) -> list[Sample]:
    """Filter by modality (in dataset order), then keep at most per_modality of each, then the first limit."""
    known = set(dataset.by_modality)
    unknown = [m for m in modalities if m not in known]
    if unknown:
        raise ConfigError(
            f"no samples with modality {', '.join(map(repr, unknown))} in {dataset.name}",
            where="--modality",
            fix=f"use one of: {', '.join(sorted(known))}",
        )
    chosen = [s for s in dataset.samples if not modalities or s.modality in modalities]
    if per_modality is not None:
        counts: dict[str, int] = {}
        kept = []
        for s in chosen:
            if counts.get(s.modality, 0) < per_modality:
                counts[s.modality] = counts.get(s.modality, 0) + 1
                kept.append(s)
        chosen = kept
    if limit is not None:
        chosen = chosen[:limit]
    if not chosen:
        raise ConfigError(
            "the selection holds no sample",
            where="--limit/--modality",
            fix="widen --modality or raise --limit",
        )
    return chosen


# A prompt far larger than the model could ever take is refused here, before any device or runtime
# sees it (a 10 MB prompt took the host to 2.1 GB RSS before the runtime refused it). No tokenizer
# packs more than PROMPT_BYTES_PER_TOKEN bytes of text into one token over a whole prompt, so text
# longer than that many bytes per context token cannot fit; and no on-device model takes over
# PROMPT_BYTES_MAX of text, whatever its metadata says. Prompts under the bound go to the runtime,
# which refuses (an error row) the ones that still do not fit.
PROMPT_BYTES_PER_TOKEN = 32
PROMPT_BYTES_MAX = 2**20


def prompt_bytes(sample: Sample) -> int:
    """UTF-8 bytes of every text the sample sends: system message, tools, all turns' text parts."""
    n = len((sample.system or "").encode("utf-8", "surrogatepass"))
    n += sum(len(json.dumps(t, ensure_ascii=False).encode("utf-8", "surrogatepass")) for t in sample.tools)
    return n + sum(
        len(p.text.encode("utf-8", "surrogatepass"))
        for t in sample.turns
        for p in t.parts
        if p.kind == "text"
    )


def prompt_limit_bytes(max_context_tokens: int | None) -> int:
    """The largest prompt text (bytes) sent to a model with this context; PROMPT_BYTES_MAX if unknown."""
    if not max_context_tokens:
        return PROMPT_BYTES_MAX
    return min(PROMPT_BYTES_MAX, PROMPT_BYTES_PER_TOKEN * max_context_tokens)


def refused_samples(samples: Sequence[Sample], max_context_tokens: int | None) -> dict[str, str]:
    """sample id -> why it is not sent, for samples whose text is far larger than the model can take."""
    limit = prompt_limit_bytes(max_context_tokens)
    refused = {}
    for s in samples:
        n = prompt_bytes(s)
        if n > limit:
            context = (
                f"a model context of {max_context_tokens} tokens takes at most {limit} bytes of text"
                if max_context_tokens
                else f"edgefarm sends at most {limit} bytes of prompt text"
            )
            refused[s.id] = (
                f"prompt refused before the runtime: its text is {n} bytes and {context} "
                f"({PROMPT_BYTES_PER_TOKEN} bytes a token at most, {PROMPT_BYTES_MAX} bytes in all); "
                "shorten the sample"
            )
    return refused


def dataset_fingerprint(dataset: Dataset, samples: Sequence[Sample]) -> str:
    """sha256 over the dataset files read and every media file the run uses."""
    h = hashlib.sha256()
    listed = set(dataset.files)  # EdgeMMEval lists its media among the files: hash each file once
    paths: list[Path] = list(dataset.files) + sorted(
        {p.path for s in samples for p in s.media if p.path and p.path not in listed}
    )
    for p in paths:
        h.update(str(p.name).encode())
        with open(p, "rb") as f:
            while block := f.read(1 << 20):
                h.update(block)
    return h.hexdigest()
