"""evalscope General-MCQ (`general_mcq`): text multiple choice, `question` + option columns `A`..`J` + `answer`.

evalscope 1.14.1's `benchmarks/general_mcq/general_mcq_adapter.py` (`record_to_sample`) and its local
loader: CSV (`csv.DictReader`), JSONL or TSV, `<subset>_val.<ext>` (eval split `val`; `_dev` is its
few-shot split). The options are the columns `A`, `B`, ... up to the first the row lacks (a CSV row has
every header column, so an empty cell is an empty option, as evalscope sends it). The prompt is
evalscope's default for this benchmark, `CHINESE_SINGLE_ANSWER_TEMPLATE`, verbatim (trailing newline
included), the options lettered by the General-VMCQ rules (`A) option` lines, `{letters}` as `A,B,C`).
Text only: a `<image 1>` in the question stays text, as evalscope sends it. The answer is extracted
after `答案：` (scoring/evalscope_metrics.py) and scored as accuracy.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import DatasetError
from .evalscope_files import Row, columns, detect_columns, format_loader
from .evalscope_media import MediaContext
from .evalscope_vmcq import answer_letter, choice_sample, prompt_text, question_of
from .types import Part, Sample

FORMAT = "general_mcq"
DEFAULT_SPLIT = "val"  # evalscope's eval_split for general_mcq
OPTION_COLUMNS = "ABCDEFGHIJ"  # evalscope's self.choices
REQUIRED = ("question", "A", "B", "answer")

# evalscope MultipleChoiceTemplate.CHINESE_SINGLE_ANSWER_TEMPLATE, general_mcq's default, verbatim.
TEMPLATE = (
    '回答下面的单项选择题，请选出其中的正确答案。你的回答的全部内容应该是这样的格式："答案：[LETTER]"（不带引号），'
    "其中 [LETTER] 是 {letters} 中的一个。\n\n问题：{question}\n选项：\n{choices}\n"
)


def fits(cols: set[str]) -> bool:
    """`question` and option columns `A`, `B` (General-VMCQ's `options` column is not this format)."""
    return {"question", "A", "B"} <= cols and "options" not in cols


def options_of(row: Row) -> list[str]:
    """Columns A.. up to the first the row lacks; a value as evalscope formats it (`f"{value}"`)."""
    options = []
    for column in OPTION_COLUMNS:
        if column not in row.data:
            break
        options.append(str(row.data[column]))
    return options


def row_to_sample(row: Row, ctx: MediaContext, subset: str) -> Sample:
    """One General-MCQ row -> Sample (raises RowProblem)."""
    question = question_of(row, ctx)
    options = options_of(row)
    if len(options) < 2:
        raise ctx.problem("need option columns A and B at least (A..J)", "B")
    answer = answer_letter(row.data.get("answer"), len(options), ctx)
    parts = [Part(kind="text", text=prompt_text(question, options, TEMPLATE))]
    return choice_sample(ctx, subset, FORMAT, parts, options, answer)


def detect(path: Path) -> bool:
    """A .csv/.jsonl/.tsv file with `question`, `A` and `B` columns, or a folder holding one."""
    return detect_columns(path, fits)


def check_header(file: Path) -> None:
    """A file without a required column is refused as a whole, naming the column (not once per row)."""
    have = columns(file)
    missing = [c for c in REQUIRED if c not in have]
    if missing:
        raise DatasetError(
            f"no column {', '.join(repr(c) for c in missing)} (General-MCQ needs question, A, B.. J, answer; "
            f"the first row has: {', '.join(sorted(have)) or 'nothing readable'})",
            fix="add the column (the answer as one letter, A..J) or name it as evalscope does, e.g. "
            "id,question,A,B,C,D,answer",
            where=f"{file}:1",
        )


load = format_loader(FORMAT, fits, row_to_sample, DEFAULT_SPLIT, check_file=check_header)
"""Load a General-MCQ file or folder (+ subset); every bad row is a Problem on the Dataset."""
