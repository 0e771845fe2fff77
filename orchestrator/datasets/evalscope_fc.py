"""evalscope General-FunctionCalling (`general_fc`): `messages` + `tools` + `should_call_tool` rows.

evalscope's example is `custom_eval/text/fc/example.jsonl` (evalscope 1.14.1's
`benchmarks/general_fc/general_fc_adapter.py` `record_to_sample`): `messages` (OpenAI chat, also a
JSON string), `tools` (a list of `{"type": "function", "function": {name, description,
parameters}}`, also a JSON string), `should_call_tool` (bool, default false), no `answer`. The
messages become the sample as General-VQA reads them (system message, user turns); the tools go to
the runtime with the conversation; the label is kept as the sample's reference
(`should_call_tool: true|false`) and scored by scoring/evalscope_fc.py. These rows also have
General-VQA's `messages` column: General-VQA never takes them (they would be scored against an
empty answer).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from .evalscope_files import Row, detect_columns, format_loader
from .evalscope_media import MediaContext
from .evalscope_vqa import fc_refusal, function_calling
from .evalscope_vqa import row_to_sample as vqa_row_to_sample
from .types import Sample

FORMAT = "general_fc"
DEFAULT_SPLIT = "test"  # evalscope's eval_split for general_fc
TASK = "function_calling"
SHOULD_CALL, SHOULD_NOT_CALL = "should_call_tool: true", "should_call_tool: false"  # scoring/evalscope_fc.py


fits = function_calling  # `messages` plus `tools` or `should_call_tool`
refusal = fc_refusal


def detect(path: Path) -> bool:
    return detect_columns(path, fits)


def _json_field(row: Row, ctx: MediaContext, name: str, default: Any) -> Any:
    value = row.data.get(name, default)
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError as e:
            raise ctx.problem(f"not JSON: {e}", name) from e
    return value


def _tools(row: Row, ctx: MediaContext) -> tuple[dict[str, Any], ...]:
    from jsonschema import Draft202012Validator, SchemaError

    tools = _json_field(row, ctx, "tools", [])
    if not isinstance(tools, list):
        raise ctx.problem("must be a list of {type: function, function: {...}} specs", "tools")
    for i, tool in enumerate(tools):
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
            raise ctx.problem("each tool needs function.name (OpenAI tool spec)", f"tools[{i}]")
        params = fn.get("parameters", {})
        try:
            Draft202012Validator.check_schema(params if isinstance(params, dict) else {"type": 0})
        except SchemaError as e:
            raise ctx.problem(
                f"not a valid JSON Schema: {e.message[:200]}", f"tools[{i}].function.parameters"
            ) from e
    return tuple(tools)


def _should_call(row: Row, ctx: MediaContext) -> bool:
    value = row.data.get("should_call_tool", False)
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0"):
        return value.strip().lower() in ("true", "1")
    if isinstance(value, (bool, int)) and value in (True, False, 0, 1):
        return bool(value)
    raise ctx.problem("must be true or false", "should_call_tool")


def row_to_sample(row: Row, ctx: MediaContext, subset: str) -> Sample:
    """One General-FunctionCalling row -> Sample (raises RowProblem)."""
    base = vqa_row_to_sample(row, ctx, subset)  # the messages are read exactly as General-VQA reads them
    label = SHOULD_CALL if _should_call(row, ctx) else SHOULD_NOT_CALL
    return dataclasses.replace(
        base, task=TASK, format=FORMAT, tools=_tools(row, ctx), reference=label, references=(label,)
    )


load = format_loader(FORMAT, fits, row_to_sample, DEFAULT_SPLIT)
"""Load a General-FunctionCalling file or folder (+ subset); every bad row is a Problem."""
