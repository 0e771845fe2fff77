"""The EdgeMMEval scorer: one Sample + its raw output -> SampleScore, and outputs -> report.json.

Rules from the EdgeMMEval card (section Scoring); thresholds and verdict strings live in
`metrics.py`; each deliberate choice is in docs/scoring.md. Pure, except `read_results_file`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..datasets.types import Dataset, Sample
from ..errors import ResultsError
from .answers import ScoredAnswers
from .metrics import (
    METRICS,
    PCT_DECIMALS,
    SCORE_DECIMALS,
    STRUCTURED_BLEU_PASS,
    SUMMARY_TASKS,
    TOOL_CALL_PASS,
    verdict,
)
from .record import isolated
from .strict import STRICT_METRICS, strict_pass
from .structured import check_format, content_references
from .toolcall import check_call
from .types import CallCheck, FormatCheck, ModalityScore, SampleScore, ScoredSample, ScoreReport, ScoreSummary

NOTE_NOTHING_SCORED = (
    "nothing was scored: every test_id of the dataset is missing from the results (or null). "
    "The results file is probably missing or does not map test ids to outputs; "
    'it must be a JSON object like {"IMG-001": "model output", ...}.'
)
RESULTS_FIX = 'write one JSON object mapping each test_id to the raw output string, e.g. {"IMG-001": "a cat"}'


def metric_for(sample: Sample) -> str:
    """Which rule scores a row: tool_call, structured, rougeL (summaries) or bleu1."""
    if sample.expected_call is not None or sample.modality == "tool_call":
        return "tool_call"
    if sample.constraint is not None or sample.modality == "structured_output":
        return "structured"
    if sample.task in SUMMARY_TASKS:
        return "rougeL"
    return "bleu1"


def score_sample(sample: Sample, output: str) -> SampleScore:
    """Score one row's raw output. An empty output is scored (and fails), never skipped."""
    metric = metric_for(sample)
    base = {"id": sample.id, "modality": sample.modality, "task": sample.task, "metric": metric}
    if metric == "tool_call":
        if sample.expected_call is None:  # the loader rejects these; a hand-built Sample may not
            check = CallCheck(False, None, "row has no expected_call / expect_refusal")
        else:
            check = check_call(sample.expected_call, output, sample.tools)
        ok = check.failed is None
        return SampleScore(**base, score=TOOL_CALL_PASS if ok else 0.0, passed=ok, tool=check)
    if metric == "structured":
        if sample.constraint is None:
            fmt = FormatCheck("none", False, "row has no constraint", output)
        else:
            fmt = check_format(sample.constraint, output)
        content = METRICS.get("bleu1_content")
        refs = content_references(sample.constraint, sample.references)
        bleu = content.score(fmt.content, refs)
        score = bleu if fmt.valid else 0.0
        passed = fmt.valid and content.passes(bleu)
        return SampleScore(**base, score=score, passed=passed, format=fmt, content_bleu=bleu)
    spec = METRICS.get(metric)
    value = spec.score(output, sample.references)
    return SampleScore(**base, score=value, passed=spec.passes(value))


def _round(x: float) -> float:
    return round(float(x), SCORE_DECIMALS)


def _detail(s: SampleScore) -> dict[str, Any]:
    """The report.json sub-results of one scored sample (only where they apply)."""
    row: dict[str, Any] = {}
    if s.format is not None:
        row["constraint_type"] = s.format.constraint_type
        row["format_valid"] = s.format.valid
        row["content_bleu"] = _round(s.content_bleu or 0.0)
        row["failed_check"] = s.format.failed or (
            None if s.passed else f"content BLEU-1 below {STRUCTURED_BLEU_PASS}"
        )
    if s.tool is not None:
        row["expected_refusal"] = s.tool.expected_refusal
        row["parsed_call"] = asdict(s.tool.call) if s.tool.call is not None else None
        if row["parsed_call"] is not None:
            row["parsed_call"].pop("problem", None)
        row["failed_check"] = s.tool.failed
    return row


def _strict(s: SampleScore, sample: Sample, output: str) -> dict[str, Any]:
    """The strict verdict beside the card's (free-text rows only): the card's pass AND the content
    check (scoring/strict.py), so it is never looser than the card's rule it tightens."""
    if s.metric not in STRICT_METRICS:
        return {}
    return {"strict_passed": bool(s.passed) and strict_pass(output, sample.references)}


def scored_sample(sample: Sample, output: str) -> ScoredSample:
    """One row scored into the record; if scoring raises, the row is a scoring error (fails, 0.0)."""

    def one() -> ScoredSample:
        s = score_sample(sample, output)
        return ScoredSample(
            id=s.id,
            modality=s.modality,
            task=s.task,
            metric=s.metric,
            score=_round(s.score),
            passed=s.passed,
            reference=sample.reference,
            detail=_detail(s) | _strict(s, sample, output),
        )

    def failed(reason: str) -> ScoredSample:
        return ScoredSample(
            id=sample.id,
            modality=sample.modality,
            status="error",
            task=sample.task,
            metric=metric_for(sample),
            score=0.0,
            passed=False,
            reference=sample.reference,
            error=reason,
        )

    return isolated(one, failed)


def build_report(rows: list[ScoredSample], unknown: list[str]) -> ScoreReport:
    """Aggregate the rows (skipped ones included, dataset order) into the record (pure).

    Pass decisions use the exact values; the record's scores are already rounded."""
    scores = [s for s in rows if s.status != "skipped"]
    n = len(scores)
    passed = sum(bool(s.passed) for s in scores)
    by_mod: dict[str, list[ScoredSample]] = {}
    for s in scores:
        by_mod.setdefault(s.modality, []).append(s)
    return ScoreReport(
        scorer="edgemmeval",
        summary=ScoreSummary(
            total_scored=n,
            total_passed=passed,
            overall_avg=_round(sum(s.score or 0.0 for s in scores) / n) if n else 0.0,
            pass_rate_pct=round(100.0 * passed / n, PCT_DECIMALS) if n else 0.0,
            verdict=verdict(passed, n),
            skipped=tuple(s.id for s in rows if s.status == "skipped"),
            unknown_ids=tuple(unknown),
            scoring_errors=sum(s.status == "error" for s in scores),
            note="" if n else NOTE_NOTHING_SCORED,
        ),
        by_modality=tuple(
            ModalityScore(
                mod, len(v), sum(bool(s.passed) for s in v), _round(sum(s.score or 0.0 for s in v) / len(v))
            )
            for mod, v in by_mod.items()
        ),
        samples=tuple(rows),
    )


def score_edgemm(
    dataset: Dataset, outputs: Mapping[str, str | None], answers: ScoredAnswers | None = None
) -> ScoreReport:
    """Score every dataset row that has an output; a missing or null output is skipped. `answers`:
    the run's rows already scored (scoring/answers.py), else each row is scored here."""
    answers = answers if answers is not None else ScoredAnswers()
    rows: list[ScoredSample] = []
    for sample in dataset.samples:
        output = outputs.get(sample.id)
        if output is None:
            rows.append(
                ScoredSample(
                    id=sample.id,
                    modality=sample.modality,
                    status="skipped",
                    task=sample.task,
                    metric=metric_for(sample),
                    reference=sample.reference,
                )
            )
        else:
            rows.append(answers.row(sample.id, output, lambda s=sample, o=output: scored_sample(s, o)))
    known = {s.id for s in dataset.samples}
    unknown = sorted(k for k in outputs if k not in known)
    return build_report(rows, unknown)


def _no_duplicates(path: Path):
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in pairs:
            if key in seen:
                raise ResultsError(
                    f"test_id {key!r} appears twice",
                    fix="keep one output per test_id",
                    where=f"{path} key {key!r}",
                )
            seen[key] = value
        return seen

    return hook


def read_results_file(path: Path | str) -> dict[str, str | None]:
    """Read a card-style results.json: one JSON object mapping test_id -> output string (or null)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ResultsError("results file not found", fix=RESULTS_FIX, where=str(path)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise ResultsError(f"cannot read results file: {e}", fix=RESULTS_FIX, where=str(path)) from None
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates(path))
    except json.JSONDecodeError as e:
        raise ResultsError(
            f"not valid JSON: {e.msg}", fix=RESULTS_FIX, where=f"{path}:{e.lineno}:{e.colno}"
        ) from None
    if not isinstance(data, dict):
        kind = {list: "a list", str: "a string", int: "a number", float: "a number", bool: "a boolean"}
        raise ResultsError(
            f"top level is {kind.get(type(data), 'null')}, not an object of test_id -> output",
            fix=RESULTS_FIX,
            where=str(path),
        )
    for key, value in data.items():
        if value is not None and not isinstance(value, str):
            raise ResultsError(
                f"output is {type(value).__name__} {json.dumps(value)[:60]}, not a string (or null)",
                fix="store the raw model output as a JSON string (null marks a test that was not run)",
                where=f"{path} key {key!r}",
            )
    return data
