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


# -- the score record: what every scorer returns, whatever the dataset format ----------------------


@dataclass(frozen=True)
class ScoredSample:
    """One dataset row after scoring. `status`: scored | skipped (no output) | error (scoring raised).

    A scoring error counts as a failed answer (score 0.0) and keeps its reason in `error`."""

    id: str
    modality: str
    status: str = "scored"
    task: str = ""
    subset: str = ""
    metric: str = ""  # the rule/main metric that gives `score`
    score: float | None = None
    passed: bool | None = None  # None: the format has no pass mark (General-VQA) or not scored
    scores: Mapping[str, float] = field(default_factory=dict)  # every metric value (evalscope)
    reference: str = ""
    error: str = ""  # the scoring error's reason (status error)
    detail: Mapping[str, Any] = field(default_factory=dict)  # format sub-results, as in report.json


@dataclass(frozen=True)
class ModalityScore:
    modality: str
    total: int
    passed: int
    avg_score: float


@dataclass(frozen=True)
class MetricRow:
    """A metric averaged over a subset (evalscope's table row); `failed` says why it has no value."""

    metric: str
    subset: str
    num: int
    score: float | None
    failed: str = ""


@dataclass(frozen=True)
class ScoreSummary:
    total_scored: int
    total_passed: int | None  # None: the format has no pass mark
    overall_avg: float
    pass_rate_pct: float | None
    verdict: str = ""
    skipped: tuple[str, ...] = ()  # ids without an output, dataset order
    unknown_ids: tuple[str, ...] = ()
    scoring_errors: int = 0
    note: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)  # judge_model, judge_error, by_subset...


@dataclass(frozen=True)
class ScoreReport:
    """A device's scores: one record for every format; `scoring.report_json` writes its report.json."""

    scorer: str  # edgemmeval | general_vqa | general_vmcq | general_mcq | general_fc
    summary: ScoreSummary
    by_modality: tuple[ModalityScore, ...] = ()
    metrics: tuple[MetricRow, ...] = ()
    samples: tuple[ScoredSample, ...] = ()  # every dataset row, skipped ones included, dataset order
    dataset: str = ""  # the format's display name (evalscope's table)
    main_metric: str = ""

    def sample(self, sample_id: str) -> ScoredSample | None:
        return next((s for s in self.samples if s.id == sample_id), None)
