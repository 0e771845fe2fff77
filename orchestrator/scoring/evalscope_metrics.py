"""evalscope's General-VQA / General-VMCQ metrics, as evalscope 1.14.1 computes them (pure functions).

- Chinese: a text holding any character in U+4E00..U+9FA5 is segmented into words with jieba
  (`jieba.cut`, default mode), as evalscope's `bleu_ngram_one_sample` and
  `compute_rouge_score_one_sample_zh` do; each text (prediction, reference) is tested on its own.
- BLEU-1..4: nltk `sentence_bleu` with one-hot weights, no smoothing, case-sensitive word tokens
  from nltk's Treebank-style word tokenizer (`word_tokenize` without its punkt sentence split), or
  jieba's words (spaces included, as `list(jieba.cut(text))` gives them) for Chinese text.
- ROUGE-1/2/L recall/precision/F: the `rouge_chinese.Rouge` algorithm evalscope calls, on the text
  (jieba's words joined by spaces for Chinese): sentences cut at `?` (and CJK stops), whitespace
  tokens, case-sensitive; ROUGE-N counts DISTINCT n-grams (set overlap); ROUGE-L is the LCS of all
  tokens; F = 2PR / (P + R + 1e-8).
- Empty prediction or reference: every metric 0.0, counted in the average (evalscope >= 1.x's
  `_mean` of no scored pair; docs/evalscope.md cites it).
- VMCQ: the last `ANSWER:` marker followed by a valid letter, else the last standalone valid letter.
  MCQ: evalscope's own reading after `答案：` (its fallback: the text's last capital letter).
docs/evalscope.md lists where we differ from evalscope.
"""

from __future__ import annotations

import logging
import re
import warnings
from dataclasses import dataclass

BLEU_METRICS = ("BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4")
ROUGE_METRICS = tuple(f"ROUGE-{n}-{s}" for n in ("1", "2", "L") for s in ("R", "P", "F"))
VQA_METRICS = BLEU_METRICS + ROUGE_METRICS
VQA_MAIN_METRIC = "ROUGE-L-R"  # evalscope's main_score_name for general_vqa
ACCURACY = "Accuracy"
_ONE_HOT = {1: (1, 0, 0, 0), 2: (0, 1, 0, 0), 3: (0, 0, 1, 0), 4: (0, 0, 0, 1)}


def has_chinese(text: str) -> bool:
    """evalscope's `is_contains_chinese`: any character in U+4E00..U+9FA5."""
    return any("\u4e00" <= c <= "\u9fa5" for c in text)


def jieba_words(text: str) -> list[str]:
    """jieba's default segmentation (`jieba.cut(text)`), as evalscope calls it."""
    import jieba  # lazy: loads its dictionary (~0.5 s) only when Chinese text is scored

    jieba.setLogLevel(logging.WARNING)
    return list(jieba.cut(text))


def bleu_tokens(text: str) -> list[str]:
    """Case-sensitive Treebank-style word tokens (no downloaded nltk data needed); jieba's words
    for Chinese text."""
    if has_chinese(text):
        return jieba_words(text)
    from nltk.tokenize import word_tokenize  # lazy: nltk takes ~0.2 s to import; reports need none of it

    return word_tokenize(text, preserve_line=True)


def bleu_scores(prediction: str, reference: str) -> dict[str, float]:
    """BLEU-1..4 of one prediction against one reference (0.0 when either has no token)."""
    from nltk.translate.bleu_score import sentence_bleu

    hyp, ref = bleu_tokens(prediction), bleu_tokens(reference)
    if not hyp or not ref:
        return {m: 0.0 for m in BLEU_METRICS}
    with warnings.catch_warnings():  # nltk warns on zero n-gram overlap; the value (0) is what we want
        warnings.simplefilter("ignore")
        return {f"BLEU-{n}": float(sentence_bleu([ref], hyp, weights=w)) for n, w in _ONE_HOT.items()}


def _cut_sentences(text: str) -> list[str]:
    """rouge_chinese's Rouge.cut_sent, then its per-sentence whitespace normalisation."""
    text = re.sub(r"([。！？\?])([^”’])", r"\1\n\2", text)
    text = re.sub(r"(\.{6})([^”’])", r"\1\n\2", text)
    text = re.sub(r"(\…{2})([^”’])", r"\1\n\2", text)
    text = re.sub(r"([。！？\?][”’])([^，。！？\?])", r"\1\n\2", text)
    return [" ".join(s.split()) for s in text.rstrip().split("\n") if len(s) > 0]


def rouge_tokens(text: str) -> list[str]:
    """Whitespace tokens of all sentences, chained (as rouge_chinese's _split_into_words); Chinese
    text is first joined from jieba's words with spaces (evalscope's `' '.join(jieba.cut(p))`)."""
    if has_chinese(text):
        text = " ".join(jieba_words(text))
    return [w for s in _cut_sentences(text) for w in s.split(" ")]


def _ngrams(tokens: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def _prf(overlap: int, hyp_count: int, ref_count: int) -> tuple[float, float, float]:
    p = overlap / hyp_count if hyp_count else 0.0
    r = overlap / ref_count if ref_count else 0.0
    return r, p, 2.0 * ((p * r) / (p + r + 1e-8))


def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence (O(len(a) * len(b)) time, O(len(b)) memory)."""
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b, start=1):
            cur.append(prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1]


def rouge_scores(prediction: str, reference: str) -> dict[str, float]:
    """ROUGE-1/2/L R, P, F of one prediction against one reference (all 0.0 if either is empty)."""
    hyp, ref = rouge_tokens(prediction), rouge_tokens(reference)
    if not hyp or not ref:  # rouge_chinese raises; evalscope 1.14.1 then scores 0.0 (no pair scored)
        return {m: 0.0 for m in ROUGE_METRICS}
    out: dict[str, float] = {}
    for n in (1, 2):
        h, r = _ngrams(hyp, n), _ngrams(ref, n)
        out[f"ROUGE-{n}-R"], out[f"ROUGE-{n}-P"], out[f"ROUGE-{n}-F"] = _prf(len(h & r), len(h), len(r))
    out["ROUGE-L-R"], out["ROUGE-L-P"], out["ROUGE-L-F"] = _prf(lcs_length(ref, hyp), len(hyp), len(ref))
    return out


def vqa_scores(prediction: str, reference: str) -> dict[str, float]:
    """Every General-VQA metric of one sample, in VQA_METRICS order."""
    both = {**bleu_scores(prediction, reference), **rouge_scores(prediction, reference)}
    return {m: both[m] for m in VQA_METRICS}


# -- General-VMCQ / General-MCQ answer extraction (evalscope's parse_answers / parse_answers_zh, single answer) --
@dataclass(frozen=True)
class ChoiceSyntax:
    """How a reply names its choice: the marker before the letter, the run of labels after it, what may
    trail it, and whether the reply is read as evalscope 1.14.1 reads it (`as_evalscope`) or with the
    General-VMCQ differences docs/evalscope.md lists."""

    marker: re.Pattern[str]
    plain: re.Pattern[str]
    trailing: str
    as_evalscope: bool = False


_BRACKETED = re.compile(r"[\(\[（【]\s*([A-Za-z\d](?:\s*[,，]\s*[A-Za-z\d])*)\s*[\)\]）】]")
_BRACKETED_LIST = re.compile(r"[\(\[（【]\s*([A-Za-z\d](?:\s*[,，/、]\s*[A-Za-z\d])*)\s*[\)\]）】]")
# math typesetting around a label: `$B$`, `\(B\)`, `\boxed{B}`, `$\boxed{\text{B}}$`
_LATEX_PREFIX = re.compile(r"(?:(?:\$+|\\\(|\\(?:boxed|fbox|text|textbf|mathbf|mathrm)\s*\{)\s*)*")
_CONNECTORS = frozenset({"and", "or"})  # between two labels: `A and B`
_LABEL_TOKEN = re.compile(r"[A-Za-z\d]+")
_STANDALONE = re.compile(r"(?<![A-Za-z\d])([A-Z])(?![A-Za-z\d])")
# General-VMCQ's English templates: `ANSWER: B` (parse_answers), with edgefarm's differences
ENGLISH = ChoiceSyntax(re.compile(r"(?i)ANSWER\s*:\s*\**\s*"), re.compile(r"([A-Za-z\d][A-Za-z\d ,]*)"), ".")
# General-MCQ's Chinese templates: `答案：B`, read exactly as parse_answers_zh (either colon, strips `。` too)
CHINESE = ChoiceSyntax(
    re.compile(r"答案\s*[:：]\s*\**\s*"),
    re.compile(r"([A-Za-z0-9][A-Za-z0-9 ,，/、]*)"),
    "。.",
    as_evalscope=True,
)


def _is_label(word: str, allowed: set[str]) -> bool:
    return word in allowed or set(word) <= allowed


def _label_prefix(capture: str, allowed: set[str], connectors: bool = False) -> str:
    """Leading part of a capture made only of allowed labels ('B, not C' -> 'B'); with `connectors`,
    an `and` / `or` between two labels is stepped over."""
    tokens = list(_LABEL_TOKEN.finditer(capture))
    end = 0
    for i, token in enumerate(tokens):
        if _is_label(token.group(0), allowed):
            end = token.end()
            continue
        between = end > 0 and i + 1 < len(tokens) and _is_label(tokens[i + 1].group(0), allowed)
        if connectors and between and token.group(0).lower() in _CONNECTORS:
            continue
        break
    return capture[:end]


def _as_evalscope(output: str, allowed: set[str], syntax: ChoiceSyntax) -> str | None:
    """evalscope 1.14.1's single-answer reading: the last marker followed by a run of labels decides (one
    valid letter, else no answer); without one, the last capital letter of the text, if it is valid."""
    for marker in reversed(list(syntax.marker.finditer(output))):
        tail = output[marker.end() :]
        tail = tail[_LATEX_PREFIX.match(tail).end() :]
        for pattern in (_BRACKETED_LIST, syntax.plain):
            m = pattern.match(tail)
            prefix = _label_prefix(m.group(1), allowed, connectors=True) if m else ""
            if prefix:
                label = prefix.strip().rstrip(syntax.trailing)
                return label if label in allowed else None
    last_capital = next((c for c in reversed(output) if c.isupper()), None)
    return last_capital if last_capital in allowed else None


def extract_choice(output: str, n_choices: int, syntax: ChoiceSyntax = ENGLISH) -> str | None:
    """The letter the model chose, or None.

    ENGLISH (General-VMCQ): the last `ANSWER:` marker followed by exactly one valid letter wins
    (`ANSWER: (B)`, `ANSWER: **C**`, `ANSWER: B, not C`); without one, the last standalone valid
    capital letter. CHINESE (General-MCQ): as evalscope reads it (`_as_evalscope`).
    """
    allowed = {chr(ord("A") + i) for i in range(min(n_choices, 26))}
    if syntax.as_evalscope:
        return _as_evalscope(output, allowed, syntax)
    for marker in reversed(list(syntax.marker.finditer(output))):
        tail = output[marker.end() :]
        for pattern in (_BRACKETED, syntax.plain):
            m = pattern.match(tail)
            if m is None:
                continue
            label = _label_prefix(m.group(1), allowed).strip().rstrip(syntax.trailing)
            if label in allowed:
                return label
    for m in reversed(list(_STANDALONE.finditer(output))):
        if m.group(1) in allowed:
            return m.group(1)
    return None
