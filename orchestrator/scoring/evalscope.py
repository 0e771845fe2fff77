"""Scorers for evalscope's General-VQA, General-VMCQ and General-MCQ: per-sample metrics, averaged per subset.

Each returns the ScoreReport record; its report.json (scoring.record.report_json) keeps evalscope's
layout: {"schema_version", "format", "dataset", "main_metric", "metrics": [{"metric", "subset", "num",
"score"}...] per subset plus "OVERALL" (sample-weighted) when there are several, "samples": [{"id",
"subset", "modality", "status": "scored"|"skipped"|"error", "output", "reference", "scores"}...],
"summary": {"total_scored", "skipped" (a count), "overall_avg", "by_subset", "scoring_errors",
(VMCQ, MCQ: "total_passed", "pass_rate_pct")}}. Scores are fractions in [0, 1], rounded to SCORE_DECIMALS.
A sample whose output is None (not run, or `unsupported` such as video) is skipped. A sample whose
scoring raises is an error: every metric 0.0 (a failed answer), its reason kept.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..datasets.types import Dataset, Sample
from .answers import ScoredAnswers
from .evalscope_metrics import (
    ACCURACY,
    CHINESE,
    ENGLISH,
    VQA_MAIN_METRIC,
    VQA_METRICS,
    ChoiceSyntax,
    extract_choice,
    vqa_scores,
)
from .record import EVALSCOPE_PRETTY, isolated
from .types import MetricRow, ScoredSample, ScoreReport, ScoreSummary

SCORE_DECIMALS = 4
OVERALL = "OVERALL"


def round_score(x: float) -> float:
    """A score as every evalscope table shows it (SCORE_DECIMALS places)."""
    return round(float(x), SCORE_DECIMALS)


def metric_rows(samples: Sequence[ScoredSample], metrics: Sequence[str]) -> tuple[MetricRow, ...]:
    """Per-subset averages of each metric over scored samples (+ OVERALL when several subsets)."""
    scored = [s for s in samples if s.status != "skipped"]
    subsets = sorted({s.subset for s in scored})
    groups = [(sub, [s for s in scored if s.subset == sub]) for sub in subsets]
    if len(subsets) > 1:
        groups.append((OVERALL, scored))
    rows = []
    for metric in metrics:
        for sub, group in groups:
            values = [s.scores[metric] for s in group if metric in s.scores]
            if values:
                rows.append(MetricRow(metric, sub, len(values), round_score(sum(values) / len(values))))
    return tuple(rows)


def summarize(
    fmt: str, main: str, rows: Sequence[ScoredSample], metrics: Sequence[MetricRow], extra: Mapping[str, Any]
) -> ScoreReport:
    scored = [s for s in rows if s.status != "skipped"]
    by_subset: dict[str, int] = {}
    for s in scored:
        by_subset[s.subset] = by_subset.get(s.subset, 0) + 1
    main_values = [s.scores[main] for s in scored if main in s.scores]
    has_pass = any(s.passed is not None for s in scored)
    passed = sum(bool(s.passed) for s in scored) if has_pass else None
    return ScoreReport(
        scorer=fmt,
        summary=ScoreSummary(
            total_scored=len(scored),
            total_passed=passed,
            overall_avg=round_score(sum(main_values) / len(main_values)) if main_values else 0.0,
            pass_rate_pct=(round(100.0 * passed / len(scored), 2) if scored else 0.0) if has_pass else None,
            skipped=tuple(s.id for s in rows if s.status == "skipped"),
            scoring_errors=sum(s.status == "error" for s in rows),
            extra={"by_subset": by_subset, **extra},
        ),
        metrics=tuple(metrics),
        samples=tuple(rows),
        dataset=EVALSCOPE_PRETTY[fmt],
        main_metric=main,
    )


def score_all(
    dataset: Dataset,
    outputs: Mapping[str, str | None],
    main: str,
    names: Sequence[str],
    one: Callable[[Sample, str], tuple[dict[str, float], dict[str, Any]]],
    pass_of: Callable[[dict[str, float]], bool | None],
    answers: ScoredAnswers | None = None,
) -> list[ScoredSample]:
    answers = answers if answers is not None else ScoredAnswers()
    rows = []
    for sample in dataset.samples:
        out = outputs.get(sample.id)
        base = {
            "id": sample.id,
            "modality": sample.modality,
            "subset": sample.subset,
            "metric": main,
            "reference": sample.reference,
        }
        if out is None:
            rows.append(ScoredSample(**base, status="skipped", detail={"output": None}))
            continue

        def scored(sample: Sample = sample, out: str = out, base: dict = base) -> ScoredSample:
            scores, detail = one(sample, out)
            scores = {m: round_score(v) for m, v in scores.items()}
            return ScoredSample(
                **base,
                score=scores.get(main),
                passed=pass_of(scores),
                scores=scores,
                detail={"output": out, **detail},
            )

        def failed(reason: str, out: str = out, base: dict = base) -> ScoredSample:
            zeros = {m: 0.0 for m in names}
            return ScoredSample(
                **base,
                status="error",
                score=0.0,
                passed=pass_of(zeros),
                scores=zeros,
                error=reason,
                detail={"output": out},
            )

        rows.append(
            answers.row(sample.id, out, lambda scored=scored, failed=failed: isolated(scored, failed))
        )
    return rows


def score_vqa(
    dataset: Dataset, outputs: Mapping[str, str | None], answers: ScoredAnswers | None = None
) -> ScoreReport:
    """General-VQA: BLEU-1..4 and ROUGE-1/2/L R/P/F of each output vs the row's `answer`."""
    rows = score_all(
        dataset,
        outputs,
        VQA_MAIN_METRIC,
        VQA_METRICS,
        lambda s, out: (vqa_scores(out, s.reference), {}),
        lambda scores: None,
        answers,
    )
    return summarize("general_vqa", VQA_MAIN_METRIC, rows, metric_rows(rows, VQA_METRICS), {})


def score_choices(
    fmt: str,
    syntax: ChoiceSyntax,
    dataset: Dataset,
    outputs: Mapping[str, str | None],
    answers: ScoredAnswers | None,
) -> ScoreReport:
    """Accuracy of the letter extracted (in `syntax`) from each output against the row's answer letter."""

    def one(sample: Sample, out: str) -> tuple[dict[str, float], dict[str, Any]]:
        picked = extract_choice(out, len(sample.choices), syntax)
        return {ACCURACY: 1.0 if picked == sample.reference else 0.0}, {"extracted": picked}

    rows = score_all(
        dataset, outputs, ACCURACY, (ACCURACY,), one, lambda scores: scores.get(ACCURACY) == 1.0, answers
    )
    return summarize(fmt, ACCURACY, rows, metric_rows(rows, (ACCURACY,)), {})


def score_vmcq(
    dataset: Dataset, outputs: Mapping[str, str | None], answers: ScoredAnswers | None = None
) -> ScoreReport:
    """General-VMCQ: accuracy of the letter after `ANSWER:`."""
    return score_choices("general_vmcq", ENGLISH, dataset, outputs, answers)


def score_mcq(
    dataset: Dataset, outputs: Mapping[str, str | None], answers: ScoredAnswers | None = None
) -> ScoreReport:
    """General-MCQ: accuracy of the letter after `答案：` (its Chinese template)."""
    return score_choices("general_mcq", CHINESE, dataset, outputs, answers)
