"""Text metrics of the EdgeMMEval scorer (BLEU-1, ROUGE-L) and every pass threshold, in one place.

The EdgeMMEval card keeps its thresholds "at the top of score.py"; ours live here, and every caller
(`edgefarm score`, `edgefarm run`, the report) reads them from this module. The deliberate choices
(tokeniser, smoothing, stemming) are written down in docs/scoring.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..registry import Registry

# -- the rules (EdgeMMEval card, section Scoring) -------------------------------------------------
BLEU1_PASS = 0.5  # most tasks: BLEU-1 vs reference_variants
ROUGE_L_PASS = 0.4  # tasks `summarization` / `summarize`
STRUCTURED_BLEU_PASS = 0.3  # structured output: format valid AND content BLEU-1 >= this
TOOL_CALL_PASS = 1.0  # tool rows score 1.0 (right call / valid refusal) or 0.0
SUMMARY_TASKS = frozenset({"summarization", "summarize"})
VERDICT_PASS_RATE_PCT = 80  # verdict OK when pass rate >= this (exactly 80% is OK)
VERDICT_OK = "✓ INFERENCE WORKING"
VERDICT_ISSUES = "✗ ISSUES DETECTED"
SCORE_DECIMALS = 4  # rounding of per-sample scores and averages in report.json
PCT_DECIMALS = 2  # rounding of pass_rate_pct
# --------------------------------------------------------------------------------------------------

BLEU1_WEIGHTS = (1.0, 0.0, 0.0, 0.0)
# With weights (1,0,0,0) smoothing cannot change the value (nltk drops zero precisions and the
# 2..4-gram terms are weighted 0); method1 is passed only so nltk does not warn about zero 2..4-gram
# counts, without touching the process-wide warnings filter (scoring runs in device threads).


@lru_cache(maxsize=1)
def _smoothing():
    from nltk.translate.bleu_score import SmoothingFunction  # lazy: ~0.2 s; report rendering needs none of it

    return SmoothingFunction().method1


_TOKEN = re.compile(r"\w+")
ROUGE_USE_STEMMER = True


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens (Unicode `\\w+`); punctuation is dropped, so `Paris.` == `Paris`."""
    return _TOKEN.findall(text.lower())


def bleu1(output: str, references: Sequence[str]) -> float:
    """Sentence BLEU-1 of `output` against all `references` at once (nltk, standard brevity penalty).

    Empty output, or references that hold no word, score 0.0.
    """
    hyp = tokenize(output)
    refs = [toks for toks in (tokenize(r) for r in references) if toks]
    if not hyp or not refs:
        return 0.0
    from nltk.translate.bleu_score import sentence_bleu

    return float(sentence_bleu(refs, hyp, weights=BLEU1_WEIGHTS, smoothing_function=_smoothing()))


@lru_cache(maxsize=1)
def _rouge_scorer():
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=ROUGE_USE_STEMMER)


def rouge_l(output: str, references: Sequence[str]) -> float:
    """ROUGE-L F-measure (rouge-score, Porter stemmer), the best over the references."""
    if not output.strip():
        return 0.0
    scorer = _rouge_scorer()
    return max((float(scorer.score(ref, output)["rougeL"].fmeasure) for ref in references), default=0.0)


@dataclass(frozen=True)
class MetricSpec:
    """A pure text metric: one output vs its references, with its direction and pass threshold."""

    name: str
    score: Callable[[str, Sequence[str]], float]
    higher_is_better: bool = True
    pass_at: float | None = None

    def passes(self, value: float) -> bool:
        if self.pass_at is None:
            return False
        return value >= self.pass_at if self.higher_is_better else value <= self.pass_at


METRICS = Registry[MetricSpec]("metric")
METRICS.add("bleu1", MetricSpec("bleu1", bleu1, pass_at=BLEU1_PASS))
METRICS.add("rougeL", MetricSpec("rougeL", rouge_l, pass_at=ROUGE_L_PASS))
# the content half of a structured-output row: same BLEU-1, lower bar
METRICS.add("bleu1_content", MetricSpec("bleu1_content", bleu1, pass_at=STRUCTURED_BLEU_PASS))


def verdict(passed: int, scored: int) -> str:
    """`✓ INFERENCE WORKING` when passed/scored >= 80% (exact integer comparison), else issues."""
    if scored > 0 and passed * 100 >= VERDICT_PASS_RATE_PCT * scored:
        return VERDICT_OK
    return VERDICT_ISSUES
