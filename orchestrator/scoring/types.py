"""Records of the scorer: one SampleScore per scored row, with the sub-results that explain it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class FormatCheck:
    """Did a structured-output answer have the required shape? `failed` says which check failed."""

    constraint_type: str  # json_schema | regex | grammar
    valid: bool
    failed: str | None = None  # e.g. "no JSON found", "schema: 'age' is a required property at $"
    content: str = ""  # what the content BLEU reads: the JSON's leaf values, or the trimmed output


@dataclass(frozen=True)
class ParsedCall:
    """A tool call found in a model output."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    syntax: Literal["json", "python"] = "json"
    problem: str | None = None  # e.g. arguments that are not a JSON object


@dataclass(frozen=True)
class CallCheck:
    """Tool-call row outcome: the call found (if any) and the first check that failed (if any)."""

    expected_refusal: bool
    call: ParsedCall | None
    failed: str | None = None


@dataclass(frozen=True)
class SampleScore:
    """One scored row. `metric` is bleu1 | rougeL | structured | tool_call."""

    id: str
    modality: str
    task: str
    metric: str
    score: float
    passed: bool
    format: FormatCheck | None = None  # structured rows
    content_bleu: float | None = None  # structured rows
    tool: CallCheck | None = None  # tool rows
