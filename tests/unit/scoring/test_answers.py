"""One run's scoring (scoring/answers.py): an answer several devices give to a sample is scored once,
and every device's report is exactly what scoring it alone gives."""

from __future__ import annotations

import pickle
import threading
from dataclasses import replace

import pytest

from orchestrator.datasets import BUNDLED_DATASET, load_dataset, require_valid
from orchestrator.scoring import SCORERS, RunScoring, ScoredAnswers, report_json, score_safely
from orchestrator.scoring.types import ScoredSample


@pytest.fixture(scope="module")
def bundled():
    if not (BUNDLED_DATASET / "data" / "test" / "metadata.jsonl").exists():
        pytest.fail(f"the bundled dataset is not built at {BUNDLED_DATASET}: run scripts/build_dataset.py")
    return require_valid(load_dataset(str(BUNDLED_DATASET)))


def answers_of(ds) -> dict[str, str | None]:
    """Every kind of row answered: the reference (passes), a wrong word, an empty answer, not run."""
    out: dict[str, str | None] = {}
    for n, s in enumerate(ds.samples):
        out[s.id] = (s.reference, "banana", "", None)[n % 4]
    return out


def test_each_distinct_answer_is_scored_once_and_every_report_is_unchanged(bundled) -> None:
    outputs = answers_of(bundled)
    alone = report_json(SCORERS.get("edgemmeval").score(bundled, outputs))
    run = RunScoring(SCORERS.get("edgemmeval").score)
    for _ in range(3):  # three identical phones
        assert report_json(score_safely(run, bundled, outputs)) == alone
    answered = sum(v is not None for v in outputs.values())
    assert len(run.answers) == answered  # not 3x: the second and third phone scored nothing
    other = dict(outputs)
    changed = next(k for k, v in outputs.items() if v is not None)
    other[changed] = "a different answer"
    assert report_json(score_safely(run, bundled, other)) == report_json(
        SCORERS.get("edgemmeval").score(bundled, other)
    )
    assert len(run.answers) == answered + 1  # only the new answer was scored


def test_a_slice_of_the_dataset_reuses_the_rows_of_the_whole(bundled) -> None:
    outputs = answers_of(bundled)
    run = RunScoring(SCORERS.get("edgemmeval").score)
    score_safely(run, bundled, outputs)
    half = replace(bundled, samples=bundled.samples[: len(bundled.samples) // 2])  # a shard's share
    sliced = {s.id: outputs[s.id] for s in half.samples}
    before = len(run.answers)
    assert report_json(score_safely(run, half, sliced)) == report_json(
        SCORERS.get("edgemmeval").score(half, sliced)
    )
    assert len(run.answers) == before


def test_devices_scoring_at_once_in_threads_get_the_same_report(bundled) -> None:
    outputs = answers_of(bundled)
    alone = report_json(SCORERS.get("edgemmeval").score(bundled, outputs))
    run = RunScoring(SCORERS.get("edgemmeval").score)
    got: list[dict] = []
    threads = [
        threading.Thread(target=lambda: got.append(report_json(score_safely(run, bundled, outputs))))
        for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and all(g == alone for g in got)
    assert len(run.answers) == sum(v is not None for v in outputs.values())


def test_a_row_is_made_once_per_sample_and_answer() -> None:
    answers = ScoredAnswers()
    made: list[str] = []

    def score(sid: str):
        def one() -> ScoredSample:
            made.append(sid)
            return ScoredSample(id=sid, modality="text")

        return one

    first = answers.row("A", "x", score("A"))
    assert answers.row("A", "x", score("A")) is first
    answers.row("A", "y", score("A"))  # another answer to the same sample
    answers.row("B", "x", score("B"))  # the same answer to another sample
    assert made == ["A", "A", "B"]


def test_it_travels_to_a_farm_host_empty() -> None:
    run = RunScoring(SCORERS.get("edgemmeval").score)
    run.answers.row("A", "x", lambda: ScoredSample(id="A", modality="text"))
    copy = pickle.loads(pickle.dumps(run))
    assert len(run.answers) == 1 and len(copy.answers) == 0
    assert copy.score_fn is run.score_fn
    copy.answers.row("A", "x", lambda: ScoredSample(id="A", modality="text"))  # usable: it has its lock
    assert len(copy.answers) == 1
