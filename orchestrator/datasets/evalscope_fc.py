"""evalscope General-FunctionCalling (`general_fc`): recognised and refused, never read as General-VQA.

Its rows (`custom_eval/text/fc/example.jsonl` in evalscope: `messages`, `tools`, `should_call_tool`,
no `answer`) also carry General-VQA's `messages` column; read as General-VQA they would be scored
with empty references (every metric 0). evalscope scores them from the model's native tool calls
(`finish_reason == "tool_calls"`, arguments checked against each tool's JSON Schema) into
tool_call_f1 / schema_accuracy / counts; edgefarm does not implement that scorer (docs/evalscope.md).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import DatasetError
from .evalscope_files import detect_columns
from .types import Dataset

FORMAT = "general_fc"
FC_COLUMNS = frozenset({"tools", "should_call_tool"})


def fits(cols: set[str]) -> bool:
    """evalscope's function-calling rows: `messages` plus `tools` or `should_call_tool`."""
    return "messages" in cols and bool(FC_COLUMNS & cols)


def detect(path: Path) -> bool:
    return detect_columns(path, fits)


def refusal(path: Path) -> DatasetError:
    return DatasetError(
        "this is evalscope's General-FunctionCalling format (general_fc: `messages`, `tools`, "
        "`should_call_tool`), which edgefarm does not score; read as General-VQA every row would have an "
        "empty reference",
        fix="score tool use with EdgeMMEval `tool_call` rows (`expected_tool_call`, see docs/dataset.md), "
        "or run this file with evalscope itself (`--datasets general_fc`)",
        where=str(path),
    )


def load(path: Path, subset: str | None = None, **_: object) -> Dataset:
    raise refusal(path)
