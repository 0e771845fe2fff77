"""Scoring: pure metric functions and one scorer per dataset format.

A scorer takes the dataset and a mapping test_id -> raw output (None = not run) and returns the
ScoreReport record; `report_json` writes it in the format's report.json layout. `edgefarm score` and
`edgefarm run` both go through SCORERS, and `score_safely` keeps scoring inside a device's failure
boundary.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import import_module
from typing import TYPE_CHECKING

from ..registry import Registry
from .answers import ScoredAnswers
from .record import error_reason, read_report_json, report_json
from .types import ScoredSample, ScoreReport, ScoreSummary

if TYPE_CHECKING:
    from ..datasets.types import Dataset

# (dataset, test_id -> output, the run's scored answers or None) -> the record
ScoreFn = Callable[["Dataset", Mapping[str, "str | None"], "ScoredAnswers | None"], ScoreReport]


@dataclass(frozen=True)
class Scorer:
    format: str  # dataset format name it scores
    score: ScoreFn


SCORERS = Registry[Scorer]("scorer")


@dataclass(frozen=True)
class RunScoring:
    """One run's scoring, made by the run's execute stage and handed to every device's session: the
    format's scorer (with the judge when asked) and the answers this run has scored, so an answer a
    second device gives to the same sample is not scored again (scoring/answers.py)."""

    score_fn: ScoreFn
    answers: ScoredAnswers = field(default_factory=ScoredAnswers)

    def __call__(self, dataset: Dataset, outputs: Mapping[str, str | None]) -> ScoreReport:
        return self.score_fn(dataset, outputs, self.answers)


def score_safely(
    score: Callable[[Dataset, Mapping[str, str | None]], ScoreReport],
    dataset: Dataset,
    outputs: Mapping[str, str | None],
) -> ScoreReport:
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


def _lazy(module: str, name: str) -> ScoreFn:
    """The scorer `name` of `module` (in this package), imported when it first scores."""

    def score(
        dataset: Dataset, outputs: Mapping[str, str | None], answers: ScoredAnswers | None = None
    ) -> ScoreReport:
        return getattr(import_module(f"{__name__}.{module}"), name)(dataset, outputs, answers)

    score.__name__ = score.__qualname__ = name
    return score


score_edgemm = _lazy("edgemm", "score_edgemm")
score_vqa = _lazy("evalscope", "score_vqa")
score_vmcq = _lazy("evalscope", "score_vmcq")
score_mcq = _lazy("evalscope", "score_mcq")
score_fc = _lazy("evalscope_fc", "score_fc")

SCORERS.add("edgemmeval", Scorer("edgemmeval", score_edgemm))
SCORERS.add("general_vqa", Scorer("general_vqa", score_vqa))
SCORERS.add("general_vmcq", Scorer("general_vmcq", score_vmcq))
SCORERS.add("general_mcq", Scorer("general_mcq", score_mcq))
SCORERS.add("general_fc", Scorer("general_fc", score_fc))
# -- end registrations --

__all__ = [
    "SCORERS",
    "RunScoring",
    "ScoreReport",
    "ScoredAnswers",
    "Scorer",
    "read_report_json",
    "report_json",
    "score_safely",
]
