"""The score record at the JSON edge: each format's report.json layout out, either layout back in.

Scorers build a `ScoreReport`; `report_json` writes the layout the format's users expect (the
EdgeMMEval card's, or evalscope's), `read_report_json` reads both back into the one record, so
nobody downstream guesses at `test_id` vs `id` or `skipped` as a list or a count.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Mapping
from typing import Any

from .types import MetricRow, ModalityScore, ScoredSample, ScoreReport, ScoreSummary

SCHEMA_VERSION = 1
EDGEMM = "edgemmeval"
EVALSCOPE_PRETTY = {
    "general_vqa": "General-VQA",
    "general_vmcq": "General-VMCQ",
    "general_mcq": "General-MCQ",
    "general_fc": "General-FunctionCalling",
}


def error_reason(e: BaseException) -> str:
    """`RecursionError: maximum recursion depth exceeded ... (structured.py:123)`: type, text, where."""
    tb = traceback.extract_tb(e.__traceback__)
    where = f" ({tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno})" if tb else ""
    return f"{type(e).__name__}: {str(e)[:300]}{where}"


def isolated(score_one: Callable[[], ScoredSample], failed: Callable[[str], ScoredSample]) -> ScoredSample:
    """Score one sample; an exception (RecursionError on a poisoned answer...) becomes its error."""
    try:
        return score_one()
    except Exception as e:  # noqa: BLE001 - any failure of one sample's scoring is that sample's
        return failed(error_reason(e))


def _edgemm_sample(s: ScoredSample) -> dict[str, Any]:
    row: dict[str, Any] = {
        "test_id": s.id,
        "modality": s.modality,
        "task": s.task,
        "metric": s.metric,
        "score": s.score,
        "passed": s.passed,
    }
    row.update(s.detail)
    if s.reference:
        row["reference"] = s.reference
    if s.status == "error":
        row["scoring_error"] = s.error
    return row


def _evalscope_sample(s: ScoredSample) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": s.id,
        "subset": s.subset,
        "modality": s.modality,
        "status": s.status,
        "reference": s.reference,
        "scores": dict(s.scores),
    }
    row.update(s.detail)
    if s.status == "error":
        row["scoring_error"] = s.error
    return row


def report_json(r: ScoreReport) -> dict[str, Any]:
    """The format's report.json dict (docs/scoring.md)."""
    sm = r.summary
    if r.scorer == EDGEMM:
        summary: dict[str, Any] = {
            "total_scored": sm.total_scored,
            "total_passed": sm.total_passed or 0,
            "overall_avg": sm.overall_avg,
            "pass_rate_pct": sm.pass_rate_pct or 0.0,
            "verdict": sm.verdict,
            "skipped": list(sm.skipped),
            "unknown_ids": list(sm.unknown_ids),
            "scoring_errors": sm.scoring_errors,
        }
        if sm.note:
            summary["note"] = sm.note
        summary.update(sm.extra)
        return {
            "schema_version": SCHEMA_VERSION,
            "scorer": EDGEMM,
            "summary": summary,
            "by_modality": {
                m.modality: {"avg_score": m.avg_score, "passed": m.passed, "total": m.total}
                for m in r.by_modality
            },
            "samples": [_edgemm_sample(s) for s in r.samples if s.status != "skipped"],
        }
    summary = {
        "total_scored": sm.total_scored,
        "skipped": len(sm.skipped),
        "overall_avg": sm.overall_avg,
        "scoring_errors": sm.scoring_errors,
    }
    if sm.total_passed is not None:
        summary["total_passed"] = sm.total_passed
        summary["pass_rate_pct"] = sm.pass_rate_pct
    if sm.note:
        summary["note"] = sm.note
    summary.update(sm.extra)
    metrics = []
    for m in r.metrics:
        row: dict[str, Any] = {"metric": m.metric, "subset": m.subset, "num": m.num, "score": m.score}
        if m.failed:
            row["failed"] = m.failed
        metrics.append(row)
    return {
        "schema_version": SCHEMA_VERSION,
        "format": r.scorer,
        "dataset": r.dataset or EVALSCOPE_PRETTY.get(r.scorer, r.scorer),
        "main_metric": r.main_metric,
        "metrics": metrics,
        "samples": [_evalscope_sample(s) for s in r.samples],
        "summary": summary,
    }


_EDGEMM_ROW_KEYS = {
    "test_id",
    "id",
    "modality",
    "task",
    "metric",
    "score",
    "passed",
    "reference",
    "scoring_error",
}
_EVALSCOPE_ROW_KEYS = {"id", "subset", "modality", "status", "reference", "scores", "scoring_error"}
_SUMMARY_KEYS = {
    "total_scored",
    "total_passed",
    "overall_avg",
    "pass_rate_pct",
    "verdict",
    "skipped",
    "unknown_ids",
    "scoring_errors",
    "note",
}


def read_report_json(d: Mapping[str, Any]) -> ScoreReport:
    """Either layout (EdgeMMEval card or evalscope) back into the record; tolerant of older files."""
    sm = d.get("summary") or {}
    if "format" in d and "scorer" not in d:
        return _read_evalscope(d, sm)
    samples = []
    for row in d.get("samples") or []:
        err = row.get("scoring_error") or ""
        samples.append(
            ScoredSample(
                id=str(row.get("test_id", row.get("id", ""))),
                modality=row.get("modality", ""),
                status="error" if err else "scored",
                task=row.get("task", ""),
                metric=row.get("metric", ""),
                score=row.get("score"),
                passed=row.get("passed"),
                reference=row.get("reference", ""),
                error=err,
                detail={k: v for k, v in row.items() if k not in _EDGEMM_ROW_KEYS},
            )
        )
    skipped = sm.get("skipped") or []
    skipped = tuple(skipped) if isinstance(skipped, list) else ()
    samples += [ScoredSample(id=i, modality="", status="skipped") for i in skipped]
    return ScoreReport(
        scorer=d.get("scorer", EDGEMM),
        summary=ScoreSummary(
            total_scored=int(sm.get("total_scored", 0) or 0),
            total_passed=sm.get("total_passed"),
            overall_avg=sm.get("overall_avg", 0.0),
            pass_rate_pct=sm.get("pass_rate_pct"),
            verdict=sm.get("verdict", ""),
            skipped=skipped,
            unknown_ids=tuple(sm.get("unknown_ids") or ()),
            scoring_errors=int(sm.get("scoring_errors", 0) or 0),
            note=sm.get("note", ""),
            extra={k: v for k, v in sm.items() if k not in _SUMMARY_KEYS},
        ),
        by_modality=tuple(
            ModalityScore(mod, int(v.get("total", 0)), int(v.get("passed", 0)), v.get("avg_score", 0.0))
            for mod, v in (d.get("by_modality") or {}).items()
        ),
        samples=tuple(samples),
    )


def _read_evalscope(d: Mapping[str, Any], sm: Mapping[str, Any]) -> ScoreReport:
    main = d.get("main_metric", "")
    samples = []
    for row in d.get("samples") or []:
        scores = dict(row.get("scores") or {})
        err = row.get("scoring_error") or ""
        status = "error" if err else row.get("status", "scored")
        passed = None
        if "Accuracy" in scores and main == "Accuracy":
            passed = scores["Accuracy"] == 1.0
        samples.append(
            ScoredSample(
                id=str(row.get("id", "")),
                modality=row.get("modality", ""),
                status=status,
                subset=row.get("subset", ""),
                metric=main,
                score=scores.get(main),
                passed=passed,
                scores=scores,
                reference=str(row.get("reference", "") or ""),
                error=err,
                detail={k: v for k, v in row.items() if k not in _EVALSCOPE_ROW_KEYS},
            )
        )
    return ScoreReport(
        scorer=d.get("format", ""),
        summary=ScoreSummary(
            total_scored=int(sm.get("total_scored", 0) or 0),
            total_passed=sm.get("total_passed"),
            overall_avg=sm.get("overall_avg", 0.0),
            pass_rate_pct=sm.get("pass_rate_pct"),
            skipped=tuple(s.id for s in samples if s.status == "skipped"),
            scoring_errors=int(sm.get("scoring_errors", 0) or 0),
            note=sm.get("note", ""),
            extra={k: v for k, v in sm.items() if k not in _SUMMARY_KEYS},
        ),
        metrics=tuple(
            MetricRow(
                m.get("metric", ""),
                m.get("subset", ""),
                int(m.get("num", 0)),
                m.get("score"),
                m.get("failed", ""),
            )
            for m in d.get("metrics") or []
        ),
        samples=tuple(samples),
        dataset=d.get("dataset", ""),
        main_metric=main,
    )
