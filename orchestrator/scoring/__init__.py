"""Scoring: pure metric functions and one scorer per dataset format.

A scorer takes the dataset and a mapping test_id -> raw output (None = not run) and returns the
ScoreReport record; `report_json` writes it in the format's report.json layout. `edgefarm score` and
`edgefarm run` both go through SCORERS, and `score_safely` keeps scoring inside a device's failure
boundary.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..registry import Registry
from .record import error_reason, read_report_json, report_json
from .types import ScoredSample, ScoreReport, ScoreSummary

if TYPE_CHECKING:
    from ..datasets.types import Dataset

ScoreFn = Callable[["Dataset", Mapping[str, "str | None"]], ScoreReport]


@dataclass(frozen=True)
class Scorer:
    format: str  # dataset format name it scores
    score: ScoreFn


SCORERS = Registry[Scorer]("scorer")


def score_safely(score: ScoreFn, dataset: Dataset, outputs: Mapping[str, str | None]) -> ScoreReport:
    """Run a scorer; if it raises as a whole (a bug, not one sample: those are isolated inside),
    every sample with an output becomes a scoring error with the reason, so reports are still written."""
    try:
        return score(dataset, outputs)
    except Exception as e:  # noqa: BLE001 - the device's failure boundary
        reason = error_reason(e)
        rows = tuple(
            ScoredSample(
                id=s.id,
                modality=s.modality,
                task=s.task,
                subset=s.subset,
                reference=s.reference,
                **(
                    {"status": "skipped"}
                    if outputs.get(s.id) is None
                    else {"status": "error", "score": 0.0, "passed": False, "error": reason}
                ),
            )
            for s in dataset.samples
        )
        n = sum(r.status == "error" for r in rows)
        summary = ScoreSummary(
            total_scored=n,
            total_passed=0,
            overall_avg=0.0,
            pass_rate_pct=0.0,
            verdict="✗ ISSUES DETECTED",
            skipped=tuple(r.id for r in rows if r.status == "skipped"),
            scoring_errors=n,
            note=f"scoring failed: {reason}",
        )
        scorer = dataset.format if dataset.format in SCORERS else "edgemmeval"
        return ScoreReport(scorer=scorer, summary=summary, samples=rows)


# -- registrations --
# Each scorer module is imported when it first scores: nltk, rouge-score and jsonschema take ~0.5 s to
# import, and reading or rendering a report (record.py, types.py) needs none of them.


def score_edgemm(dataset: Dataset, outputs: Mapping[str, str | None]) -> ScoreReport:
    from .edgemm import score_edgemm as score

    return score(dataset, outputs)


def score_vqa(dataset: Dataset, outputs: Mapping[str, str | None]) -> ScoreReport:
    from .evalscope import score_vqa as score

    return score(dataset, outputs)


def score_vmcq(dataset: Dataset, outputs: Mapping[str, str | None]) -> ScoreReport:
    from .evalscope import score_vmcq as score

    return score(dataset, outputs)


def score_fc(dataset: Dataset, outputs: Mapping[str, str | None]) -> ScoreReport:
    from .evalscope_fc import score_fc as score

    return score(dataset, outputs)


SCORERS.add("edgemmeval", Scorer("edgemmeval", score_edgemm))
SCORERS.add("general_vqa", Scorer("general_vqa", score_vqa))
SCORERS.add("general_vmcq", Scorer("general_vmcq", score_vmcq))
SCORERS.add("general_fc", Scorer("general_fc", score_fc))
# -- end registrations --

__all__ = ["SCORERS", "ScoreReport", "Scorer", "read_report_json", "report_json", "score_safely"]
