"""Row constructor and self-checks shared by the row modules.

Rows are plain dicts in the exact key order of the EdgeMMEval-format contract (docs/dataset.md),
so metadata.jsonl diffs stay readable and the loader sees what the hub format would give it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

KEY_ORDER = (
    "test_id",
    "modality",
    "task",
    "prompt",
    "turns",
    "images",
    "audio",
    "reference",
    "reference_variants",
    "system",
    "max_output_tokens",
    "tags",
    "constraint_type",
    "schema",
    "pattern",
    "grammar",
    "tools",
    "expected_call",
    "expect_refusal",
)
MODALITY_PREFIX = {
    "image": "IMG",
    "audio": "AUD",
    "text": "TXT",
    "multi_turn": "MTR",
    "combination": "CMB",
    "structured_output": "STO",
    "tool_call": "TCL",
}
TASKS = {
    "image": {
        "vqa",
        "ocr",
        "caption",
        "counting",
        "classification",
        "chart_qa",
        "resolution_stress",
        "robustness",
    },
    "audio": {"transcription", "spoken_qa", "translation", "noise_robustness", "audio_edge_case"},
    "text": {"qa", "translation", "summarization", "reasoning", "math"},
    "multi_turn": {"context_retention", "kv_cache_stress"},
    "combination": {"cross_modal"},
    "structured_output": {"json_schema", "regex", "grammar"},
    "tool_call": {"tool_call", "refusal"},
}
MAX_PROMPT_CHARS = 1500
MAX_CONVERSATION_CHARS = 2000


def row(
    test_id: str,
    task: str,
    prompt: str | None = None,
    *,
    reference: str,
    variants: Iterable[str] = (),
    turns: Iterable[str] | None = None,
    images: Iterable[str] = (),
    audio: Iterable[str] = (),
    system: str | None = None,
    max_output_tokens: int | None = None,
    tags: Iterable[str] = (),
    **extra: Any,
) -> dict[str, Any]:
    """One metadata.jsonl row; the modality follows from the id prefix, the reference leads the variants."""
    modality = {v: k for k, v in MODALITY_PREFIX.items()}[test_id.split("-")[0]]
    out: dict[str, Any] = {"test_id": test_id, "modality": modality, "task": task}
    if turns is not None:
        out["turns"] = list(turns)
    else:
        out["prompt"] = prompt
    if images:
        out["images"] = [f"images/{name}" for name in images]
    if audio:
        out["audio"] = [f"audio/{name}" for name in audio]
    out["reference"] = reference
    out["reference_variants"] = [reference] + [v for v in variants if v != reference]
    if system is not None:
        out["system"] = system
    if max_output_tokens is not None:
        out["max_output_tokens"] = max_output_tokens
    if tags:
        out["tags"] = list(tags)
    out.update(extra)
    return {k: out[k] for k in KEY_ORDER if k in out} | {k: v for k, v in out.items() if k not in KEY_ORDER}


def check_rows(rows: list[dict[str, Any]]) -> list[str]:
    """Every contract rule the builder can check on its own data; returns human-readable problems."""
    problems: list[str] = []
    seen: set[str] = set()
    for r in rows:
        tid = r.get("test_id", "?")
        say = problems.append
        if tid in seen:
            say(f"{tid}: duplicate test_id")
        seen.add(tid)
        unknown = set(r) - set(KEY_ORDER)
        if unknown:
            say(f"{tid}: unknown keys {sorted(unknown)}")
        if r["task"] not in TASKS[r["modality"]]:
            say(f"{tid}: task {r['task']!r} not allowed for {r['modality']}")
        if ("prompt" in r) == ("turns" in r):
            say(f"{tid}: needs exactly one of prompt / turns")
        if r["modality"] == "multi_turn" and not 2 <= len(r.get("turns", [])) <= 6:
            say(f"{tid}: multi_turn rows need 2-6 turns")
        texts = [r["prompt"]] if "prompt" in r else r["turns"]
        if any(len(t) > MAX_PROMPT_CHARS for t in texts):
            say(f"{tid}: a prompt is longer than {MAX_PROMPT_CHARS} characters")
        if sum(len(t) for t in texts) > MAX_CONVERSATION_CHARS:
            say(f"{tid}: conversation longer than {MAX_CONVERSATION_CHARS} characters")
        if not 2 <= len(r["reference_variants"]) <= 5 or r["reference_variants"][0] != r["reference"]:
            say(f"{tid}: reference_variants must hold 2-5 items, the reference first")
        if "edgefarm" in json.dumps(r, ensure_ascii=False).lower():
            say(f"{tid}: mentions 'edgefarm' (reserved for the tiny model's canned prompts)")
    return problems
