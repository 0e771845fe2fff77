"""The strict content check shown beside the card's verdict (pure; docs/scoring.md).

The EdgeMMEval card passes a free-text answer at BLEU-1 >= 0.5 against ANY reference variant, and
BLEU-1's brevity penalty vanishes against a one-word variant: "a sh" passes "A QR code" (the
article matches the long variant, the short one removes the penalty). The card's verdict stays as
it is (its numbers must match the card's scorer); this check says whether a pass carries content:

- a SHORT reference variant (one word, a number, an option letter) passes on a normalised exact
  match of the whole answer: lower case, punctuation and articles removed, number words 0-20 as
  digits, an option "(B)" / "B." / "option b" as "b";
- a LONGER variant passes when the answer shares at least one content word with it (a word of two
  or more characters that is not a stop word: articles, pronouns, "is", "of", ...).

The answer passes when one variant passes. Only bleu1 and rougeL rows have it: tool calls and
structured answers are already checked for their structure.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

STRICT_METRICS = frozenset({"bleu1", "rougeL"})
ARTICLES = frozenset({"a", "an", "the"})
STOP_WORDS = ARTICLES | frozenset(
    [
        "i",
        "me",
        "my",
        "we",
        "our",
        "you",
        "your",
        "he",
        "him",
        "his",
        "she",
        "her",
        "it",
        "its",
        "they",
        "them",
        "their",
        "this",
        "that",
        "these",
        "those",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "do",
        "does",
        "did",
        "have",
        "has",
        "had",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "as",
        "into",
        "onto",
        "over",
        "under",
        "and",
        "or",
        "but",
        "not",
        "no",
        "nor",
        "so",
        "if",
        "then",
        "than",
        "there",
        "here",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "where",
        "when",
        "why",
        "how",
        "all",
        "any",
        "some",
        "each",
        "both",
        "either",
        "neither",
        "very",
        "can",
        "could",
        "would",
        "should",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "just",
        "also",
        "too",
        "up",
        "down",
        "out",
        "about",
        "answer",
        "image",
        "picture",
        "photo",
        "audio",
        "shows",
        "shown",
        "show",
        "see",
        "seen",
        "appears",
        "looks",
        "like",
    ]
)
NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
}
_OPTION = re.compile(r"^\(?(?:option\s+)?([a-h])\)?[.:)]?$", re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+(?:[.,][0-9]+)?", re.UNICODE)


def words(text: str) -> list[str]:
    """Lower-case words (NFKC), numbers kept whole ("3.5"), number words as digits."""
    out = []
    for w in _WORD.findall(unicodedata.normalize("NFKC", text).lower()):
        w = w.replace(",", "") if w.replace(",", "").replace(".", "").isdigit() else w
        out.append(NUMBER_WORDS.get(w, w))
    return out


def normalised(text: str) -> str:
    """The answer as compared with a short reference: an option letter alone, else its words
    without articles, joined by spaces."""
    m = _OPTION.match(text.strip())
    if m:
        return m.group(1).lower()
    return " ".join(w for w in words(text) if w not in ARTICLES)


def content_words(text: str) -> set[str]:
    return {w for w in words(text) if w not in STOP_WORDS and (len(w) >= 2 or w.isdigit())}


def is_short(reference: str) -> bool:
    """One word, one number or one option letter (after articles are dropped)."""
    return len(normalised(reference).split()) <= 1


def strict_pass(output: str, references: Sequence[str]) -> bool:
    """Does the answer carry the reference's content? (the rules in the module docstring)"""
    answer = normalised(output)
    answer_words = content_words(output)
    for ref in references:
        if not ref.strip():
            continue
        if is_short(ref):
            if answer and answer == normalised(ref):
                return True
        elif answer_words & content_words(ref):
            return True
    return False
