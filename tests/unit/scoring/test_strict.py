"""The strict content check beside the card's verdict (scoring/strict.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.datasets.types import Dataset, Part, Sample, Turn
from orchestrator.scoring import report_json
from orchestrator.scoring.edgemm import score_edgemm
from orchestrator.scoring.strict import normalised, strict_pass


def sample(sid: str, modality: str = "text", task: str = "qa", refs=("Paris",)) -> Sample:
    turn = Turn((Part("text", text="q?"),))
    return Sample(
        id=sid, modality=modality, task=task, turns=(turn,), reference=refs[0], references=tuple(refs)
    )


def dataset(*samples: Sample) -> Dataset:
    return Dataset("t", "edgemmeval", Path("/tmp"), (), samples)


QR = ("A QR code", "QR code", "It is a QR code.")  # IMG-013 of the bundled EdgeMMEval data


def test_two_token_answer_passes_the_card_but_not_the_strict_check():
    # issue 23: a run capped at 2 output tokens answered "a sh", and the card's BLEU-1 passed it
    report = report_json(
        score_edgemm(dataset(sample("IMG-013", "image", "classification", QR)), {"IMG-013": "a sh"})
    )
    row = report["samples"][0]
    assert row["passed"] is True and row["strict_passed"] is False


def test_the_strict_verdict_is_never_looser_than_the_cards():
    """issue 36: a constant answer sharing one content word with a long summary passed the content
    check while the card's BLEU-1 failed it; the strict verdict is the card's pass AND the check."""
    summary = ("A red square drawn on a plain white background, centred in the picture",)
    assert strict_pass("red", summary)  # the content check alone: one shared word
    report = report_json(score_edgemm(dataset(sample("IMG-1", "image", "caption", summary)), {"IMG-1": "red"}))
    row = report["samples"][0]
    assert row["passed"] is False and row["strict_passed"] is False


@pytest.mark.parametrize(
    "output,refs,expected",
    [
        ("It is a QR code", QR, True),  # shares "qr", "code"
        ("a barcode", QR, False),
        ("Paris.", ("Paris",), True),  # short reference: normalised exact match
        ("The answer is Paris", ("Paris",), False),  # short reference: the whole answer must match
        ("three", ("3",), True),  # number words as digits
        ("3.5", ("3.5",), True),
        ("35", ("3.5",), False),
        ("(B)", ("B",), True),  # options
        ("option b", ("B",), True),
        ("C.", ("B",), False),
        ("", ("Paris",), False),
        ("the", ("The cat",), False),  # an article shares no content
        ("a cat sitting", ("The cat is on the mat", "cat"), True),
        ("CAFÉ", ("café",), True),
    ],
)
def test_strict_rules(output, refs, expected):
    assert strict_pass(output, refs) is expected


def test_normalised():
    assert normalised("  The Eiffel Tower! ") == "eiffel tower"
    assert normalised("(c)") == "c"
    assert normalised("1,000") == "1000"


def test_tool_rows_have_no_strict_verdict():
    row = sample("TOOL-1", "tool_call", "tool", ("x",))
    report = report_json(score_edgemm(dataset(row), {row.id: "{}"}))
    assert "strict_passed" not in report["samples"][0]


def test_score_summary_counts_and_lists_the_card_only_passes():
    import io

    from rich.console import Console

    from orchestrator.cli.score import print_summary

    ds = dataset(sample("IMG-013", "image", "classification", QR), sample("T-1", refs=("Paris",)))
    buf = io.StringIO()
    print_summary(score_edgemm(ds, {"IMG-013": "a sh", "T-1": "Paris"}), Console(file=buf, width=200))
    text = buf.getvalue()
    assert "passed 2/2 (100.0%)" in text
    assert "strict content check: passed 1/2 (50.0%); 1 card pass(es) carry no content: IMG-013" in text
