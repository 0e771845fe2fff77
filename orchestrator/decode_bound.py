"""The memory-bandwidth bound on decode speed: a decode step reads the decoder's weights and the KV
cache, so a device moving B bytes/s cannot decode faster than B / (bytes per token). A LiteRT-LM
model's cache is exported at a fixed length (model_facts: kv_cache_tokens; the tiny models' 2048) and
its decode signature takes all of it, so a step reads the whole cache whatever the depth; only where
that length is unknown is the cache counted up to the decode's context.

Pure. Bytes come from the model's own facts (model_facts.py: weights per section, KV bytes per
token); the bandwidth from devices.yaml `memory_bandwidth_gbs` only: absent, no bound is shown.
Sections a decode step does not run (vision/audio encoders, an externalized embedder, of which a step
reads one row) are left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .model_facts import ModelFacts

SKIPPED_SECTIONS = ("vision", "audio", "embedder")  # model_type words of sections a decode step does not read


def decode_bytes_per_token(facts: ModelFacts | None, context_tokens: float) -> float | None:
    """Bytes one decode step reads at a context of `context_tokens`; None without model facts."""
    if facts is None:
        return None
    weights = sum(
        s.weight_bytes for s in facts.sections if not any(w in s.model_type for w in SKIPPED_SECTIONS)
    )
    if weights <= 0:
        return None
    if facts.kv_cache_tokens:  # an exported, fixed-size cache: every step reads all of it, whatever the depth
        context_tokens = facts.kv_cache_tokens
    return weights + (facts.kv_bytes_per_token or 0.0) * context_tokens


def bound_ts(bandwidth_gbs: float | None, facts: ModelFacts | None, context_tokens: float) -> float | None:
    """Decode tokens/s the bandwidth allows at that context; None when either is unknown."""
    per_token = decode_bytes_per_token(facts, context_tokens)
    if not bandwidth_gbs or not per_token:
        return None
    return bandwidth_gbs * 1e9 / per_token


def bandwidths(entries: Any, names: Any) -> Mapping[str, float]:
    """devices.yaml's `memory_bandwidth_gbs` of the named devices that declare it."""
    out = {}
    for e in entries or ():
        if e.get("name") in names and e.get("memory_bandwidth_gbs"):
            out[e["name"]] = float(e["memory_bandwidth_gbs"])
    return out
