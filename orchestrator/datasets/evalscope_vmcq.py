"""evalscope General-VMCQ: `question` + `options` + `answer` letter, media through placeholders.

The prompt is evalscope's default General-VMCQ template (single answer, chain of thought), with the
options as `A) ...` lines and the answer requested as a final `ANSWER: X` line. Placeholders in
the question and options become media parts in place. Every non-empty media column is validated,
even one no placeholder uses, as evalscope does.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

from ..jsonio import DATASET_ROW, JsonBoundError, describe, loads
from .evalscope_files import Row, detect_columns, format_loader
from .evalscope_media import KINDS, MediaContext, media_map, modality, split_text, warn_missing
from .types import Part, Sample, Turn

FORMAT = "general_vmcq"
PRETTY = "General-VMCQ"
DEFAULT_SPLIT = "val"  # evalscope's eval_split for general_vmcq
TASK = "multiple_choice"
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

# evalscope MultipleChoiceTemplate.SINGLE_ANSWER_COT, the default of general_vmcq, verbatim.
TEMPLATE = (
    "Answer the following multiple choice question. The last line of your response should be of the "
    "following format: 'ANSWER: [LETTER]' (without quotes) where [LETTER] is one of {letters}. "
    "Think step by step before answering.\n\n{question}\n\n{choices}"
)


def fits(cols: set[str]) -> bool:
    return {"question", "options"} <= cols


def parse_options(raw: Any, ctx: MediaContext) -> list[str]:
    """A list, or a string holding a JSON array (else a Python list literal, as evalscope accepts)."""
    if isinstance(raw, str):
        try:
            raw = loads(raw, DATASET_ROW)
        except JsonBoundError as e:
            raise ctx.problem(f"options is {describe(e, raw)[0]}", "options") from None
        except json.JSONDecodeError:
            try:  # within the JSON bounds (checked above); the parser's own limits still raise
                raw = ast.literal_eval(raw)
            except (ValueError, SyntaxError, RecursionError, MemoryError):
                raise ctx.problem("options is not a JSON array (nor a Python list)", "options") from None
    if not isinstance(raw, (list, tuple)):
        raise ctx.problem(f"options must be a list, got {type(raw).__name__}", "options")
    options = [str(x) for x in raw]
    if not 2 <= len(options) <= len(LETTERS):
        raise ctx.problem(f"need 2 to {len(LETTERS)} options, got {len(options)}", "options")
    return options


def prompt_text(question: str, options: list[str], template: str = TEMPLATE) -> str:
    """evalscope's multiple-choice prompt (its `prompt(...)`): `{letters}` as `A,B,C`, `{choices}` as one
    `A) option` line per option (General-VMCQ: before placeholders are replaced by media)."""
    letters = LETTERS[: len(options)]
    choices = "\n".join(f"{letter}) {option}" for letter, option in zip(letters, options))
    return template.format(letters=",".join(letters), question=question, choices=choices)


def answer_letter(raw: Any, n_options: int, ctx: MediaContext) -> str:
    """The row's `answer`: one letter of the options, any case (evalscope compares lower-cased), upper-cased."""
    letters = LETTERS[:n_options]
    answer = str(raw).strip().upper() if isinstance(raw, (str, int)) else ""
    if len(answer) != 1 or answer not in letters:
        many = (
            " (several answers, evalscope's multiple_correct, are not read)" if isinstance(raw, list) else ""
        )
        raise ctx.problem(f"answer must be one letter of {','.join(letters)}, got {raw!r}{many}", "answer")
    return answer


def row_to_sample(row: Row, ctx: MediaContext, subset: str) -> Sample:
    """One General-VMCQ row -> Sample (raises RowProblem)."""
    question = question_of(row, ctx)
    if row.data.get("options") is None:
        raise ctx.problem("options is missing", "options")
    options = parse_options(row.data["options"], ctx)
    answer = answer_letter(row.data.get("answer"), len(options), ctx)
    maps = {kind: media_map(row.data, kind, ctx, None) for kind in KINDS}  # validates every column
    parts = split_text(prompt_text(question, options), maps, warn_missing(ctx.where))
    return choice_sample(ctx, subset, FORMAT, parts, options, answer)


def question_of(row: Row, ctx: MediaContext) -> str:
    question = row.data.get("question")
    if question is None or not str(question).strip():
        raise ctx.problem("question is missing or empty", "question")
    return str(question)


def choice_sample(
    ctx: MediaContext, subset: str, fmt: str, parts: list[Part], options: list[str], answer: str
) -> Sample:
    """A multiple-choice Sample (General-VMCQ, General-MCQ): one user turn, the answer letter as reference."""
    return Sample(
        id=ctx.test_id,
        modality=modality(parts),
        task=TASK,
        turns=(Turn(tuple(parts)),),
        reference=answer,
        references=(answer,),
        format=fmt,
        subset=subset,
        choices=tuple(options),
        where=ctx.where,
    )


def detect(path: Path) -> bool:
    """A .jsonl/.tsv file with `question` and `options` columns, or a folder holding one."""
    return detect_columns(path, fits)


load = format_loader(FORMAT, fits, row_to_sample, DEFAULT_SPLIT)
"""Load a General-VMCQ file or folder (+ subset); every bad row is a Problem on the Dataset."""
