"""BLEU-1 / ROUGE-L pinned against direct nltk and rouge-score calls on the same tokens."""

from __future__ import annotations

import math
import warnings

import pytest
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
from rouge_score import rouge_scorer

from orchestrator.errors import UnknownName
from orchestrator.scoring.metrics import (
    METRICS,
    VERDICT_ISSUES,
    VERDICT_OK,
    bleu1,
    rouge_l,
    tokenize,
    verdict,
)

PAIRS = [
    ("A red circle and a blue square", ["a red circle and a blue square", "red circle, blue square"]),
    ("There are three cats.", ["3", "three", "There are 3 cats"]),
    ("the the the the", ["the cat is on the mat"]),
    ("Paris is the capital of France", ["Paris"]),
    ("Bonjour le monde", ["Bonjour tout le monde", "Salut le monde"]),
    ("I hear a dog barking loudly outside the window", ["A dog is barking", "dog barking"]),
]


@pytest.mark.parametrize(("output", "refs"), PAIRS)
def test_bleu1_equals_direct_nltk_call(output: str, refs: list[str]) -> None:
    with warnings.catch_warnings():  # nltk's own warning on zero 2..4-gram counts (method0)
        warnings.simplefilter("ignore")
        direct = sentence_bleu(
            [tokenize(r) for r in refs],
            tokenize(output),
            weights=(1, 0, 0, 0),
            smoothing_function=SmoothingFunction().method0,
        )
    assert direct > 0 or output == "Bonjour le monde"
    assert bleu1(output, refs) == pytest.approx(direct, abs=1e-12)


def test_bleu1_known_values() -> None:
    assert bleu1("Paris", ["Paris."]) == 1.0  # punctuation does not count
    assert bleu1("the answer is paris", ["Paris"]) == pytest.approx(0.25)
    # brevity penalty: 1 of 3 reference words, precision 1 -> exp(1 - 3/1)
    assert bleu1("dog", ["a dog barks"]) == pytest.approx(math.exp(-2))
    # closest reference length picks the short variant: no penalty
    assert bleu1("dog", ["a dog barks", "dog"]) == 1.0


def test_bleu1_smoothing_cannot_change_value_and_never_warns() -> None:
    hyp, refs = "a dog", ["a cat sat"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = bleu1(hyp, refs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m0 = sentence_bleu([tokenize(refs[0])], tokenize(hyp), weights=(1, 0, 0, 0))
    assert got == pytest.approx(m0) and got == pytest.approx(0.5 * math.exp(1 - 3 / 2))


@pytest.mark.parametrize("output", ["", "   ", "...", "!?"])
def test_bleu1_empty_or_wordless_output_is_zero(output: str) -> None:
    assert bleu1(output, ["anything"]) == 0.0


def test_tokenize_lowercases_and_drops_punctuation() -> None:
    assert tokenize("Hello, World! It's 3.5°C — café") == ["hello", "world", "it", "s", "3", "5", "c", "café"]


SUMMARIES = [
    ("The cat sat on the mat", ["A cat was sitting on the mat"]),
    (
        "Rain is expected tomorrow in the north.",
        ["Tomorrow brings rain to the north", "Northern rain tomorrow"],
    ),
    ("Completely unrelated words here", ["The committee approved the budget"]),
    ("Stocks fell sharply as investors worried", ["Investors worried and stocks fell"]),
]


@pytest.mark.parametrize(("output", "refs"), SUMMARIES)
def test_rouge_l_equals_direct_rouge_score_max_over_refs(output: str, refs: list[str]) -> None:
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    direct = max(scorer.score(r, output)["rougeL"].fmeasure for r in refs)
    assert rouge_l(output, refs) == pytest.approx(direct, abs=1e-12)


def test_rouge_l_known_value_and_empty() -> None:
    # LCS "cat on the mat" = 4 of 6 output words and 7 reference words
    p, r = 4 / 6, 4 / 7
    assert rouge_l("The cat sat on the mat", ["A cat was sitting on the mat"]) == pytest.approx(
        2 * p * r / (p + r)
    )
    # max over references, not the first one
    assert rouge_l("north rain", ["completely different", "north rain"]) == 1.0
    assert rouge_l("", ["x y"]) == 0.0


def test_registry_holds_specs_with_thresholds() -> None:
    assert METRICS.get("bleu1").pass_at == 0.5
    assert METRICS.get("rougeL").pass_at == 0.4
    assert METRICS.get("bleu1_content").pass_at == 0.3
    assert METRICS.get("bleu1").passes(0.5) and not METRICS.get("bleu1").passes(0.4999)
    with pytest.raises(UnknownName, match="Did you mean 'bleu1'"):
        METRICS.get("blue1")


@pytest.mark.parametrize(
    ("passed", "scored", "want"),
    [
        (4, 5, VERDICT_OK),
        (8, 10, VERDICT_OK),
        (79, 99, VERDICT_ISSUES),
        (799, 1000, VERDICT_ISSUES),
        (10, 10, VERDICT_OK),
        (0, 0, VERDICT_ISSUES),
        (0, 3, VERDICT_ISSUES),
    ],
)
def test_verdict_edges(passed: int, scored: int, want: str) -> None:
    assert verdict(passed, scored) == want


def test_verdict_strings_are_byte_exact() -> None:
    assert VERDICT_OK.encode() == b"\xe2\x9c\x93 INFERENCE WORKING"
    assert VERDICT_ISSUES.encode() == b"\xe2\x9c\x97 ISSUES DETECTED"
