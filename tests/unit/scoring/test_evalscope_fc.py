"""General-FunctionCalling scores against evalscope 1.14.1's own method, restated here statement for
statement: `general_fc_adapter.py` `match_score` and `aggregate_scores`, and
`function_call_adapter.py` `validate_tool_call` (jsonschema). The model's tool calls are given as the
runners render the runtime's `tool_calls` (android_runner/conversation.py `reply_text`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import ValidationError, validate

from android_runner.conversation import reply_text
from orchestrator.datasets.types import Dataset, Part, Sample, Turn
from orchestrator.scoring import SCORERS, report_json
from orchestrator.scoring.evalscope_table import render_table

ADD = {"type": "function", "function": {"name": "add", "parameters": {
    "type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["a", "b"], "additionalProperties": False}}}  # fmt: skip
TEMP = {"type": "function", "function": {"name": "convert_temperature", "parameters": {
    "type": "object", "properties": {"celsius": {"type": "number"}}, "required": ["celsius"]}}}  # fmt: skip


def _call(name: str, arguments) -> dict:
    """The runtime's response JSON with one tool call (arguments as the runtime may give them)."""
    return {
        "role": "assistant",
        "tool_calls": [{"type": "function", "function": {"name": name, "arguments": arguments}}],
    }


# (subset, should_call_tool, tools, runtime response or plain text, evalscope's tool_calls or None)
CASES = [
    ("a", True, [ADD], _call("add", {"a": 2, "b": 3}), [("add", {"a": 2, "b": 3})]),  # valid call
    ("a", True, [ADD], _call("add", '{"a": 2}'), [("add", '{"a": 2}')]),  # string args, missing b
    ("a", True, [ADD], _call("sub", {"a": 1, "b": 2}), [("sub", {"a": 1, "b": 2})]),  # no such tool
    ("a", False, [ADD], _call("add", {"a": 1, "b": 1}), [("add", {"a": 1, "b": 1})]),  # should not call
    ("a", False, [ADD], "Sure, let's chat!", None),  # no call, rightly
    ("a", True, [ADD], 'I would call {"name": "add", "arguments": {"a": 2, "b": 3}} now', None),  # text
    ("b", True, [TEMP], _call("convert_temperature", {"celsius": 37}), [("convert_temperature", {"celsius": 37})]),
    ("b", True, [TEMP], "98.6", None),
    ("b", False, [TEMP], "", None),  # an empty answer (a runner error reads the same here)
    ("b", True, [TEMP, ADD], {"role": "assistant", "tool_calls": [
        {"function": {"name": "convert_temperature", "arguments": {"celsius": 1}}},
        {"function": {"name": "add", "arguments": {"a": "x", "b": 1}}}]},
     [("convert_temperature", {"celsius": 1}), ("add", {"a": "x", "b": 1})]),  # 2nd call invalid
]  # fmt: skip


def evalscope_validate(tool_calls, tools):  # function_call_adapter.validate_tool_call, verbatim logic
    tool_name = ""
    try:
        for name, args in tool_calls:
            tool_name = name
            schema = next(
                (t["function"]["parameters"] for t in tools if t["function"]["name"] == tool_name), None
            )
            if not schema:
                return False, f"No schema found for tool '{tool_name}'"
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except json.JSONDecodeError as e:
                    return False, f"JSON parse failed for tool '{tool_name}' arguments: {e}"
            validate(instance=args, schema=schema)
    except ValidationError as e:
        return False, f"Schema validation failed for tool '{tool_name}': {e.message}"
    return True, ""


def evalscope_match(should_call_tool, tools, tool_calls):  # general_fc_adapter.match_score (no error)
    is_call_tool = tool_calls is not None
    is_valid_tool_call, _ = evalscope_validate(tool_calls or [], tools)
    is_call_successful = is_call_tool and is_valid_tool_call
    passed = is_call_successful if should_call_tool else not is_call_tool
    return {"passed": passed, "finish_reason_tool_call": int(is_call_tool),
            "successful_tool_call": int(is_call_successful), "should_call_tool": int(should_call_tool)}  # fmt: skip


def evalscope_aggregate(values):  # general_fc_adapter.aggregate_scores
    finish = success = attempted = valid = tp = fp = fn = tn = 0
    for v in values:
        pred_is_tool, pred_is_success, label = (
            v["finish_reason_tool_call"],
            v["successful_tool_call"],
            v["should_call_tool"],
        )
        finish += pred_is_tool
        success += pred_is_success
        if pred_is_tool == 1:
            attempted += 1
            if pred_is_success == 1:
                valid += 1
        if pred_is_tool == 1 and label == 1:
            tp += 1
        elif pred_is_tool == 1 and label == 0:
            fp += 1
        elif pred_is_tool == 0 and label == 1:
            fn += 1
        else:
            tn += 1
    schema_accuracy = (valid / attempted) if attempted > 0 else 0.0
    precision = (tp / (tp + fp)) if (tp + fp) > 0 else 0.0
    recall = (tp / (tp + fn)) if (tp + fn) > 0 else 0.0
    f1 = (2 * precision * recall / (precision + recall)) if (precision + recall) > 0 else 0.0
    return {"tool_call_f1": f1, "count_finish_reason_tool_call": finish, "count_successful_tool_call": success,
            "schema_accuracy": schema_accuracy}  # fmt: skip


def _dataset() -> tuple[Dataset, dict[str, str]]:
    samples, outputs = [], {}
    for i, (subset, should, tools, response, _) in enumerate(CASES):
        label = f"should_call_tool: {'true' if should else 'false'}"
        samples.append(Sample(id=str(i), modality="text", task="function_calling",
                              turns=(Turn(parts=(Part(kind="text", text="q"),)),), reference=label,
                              references=(label,), format="general_fc", subset=subset, tools=tuple(tools)))  # fmt: skip
        outputs[str(i)] = reply_text(response) if isinstance(response, dict) else response
    return Dataset(name="fc", format="general_fc", root=Path("/"), files=(), samples=tuple(samples)), outputs


def test_per_sample_values_and_subset_metrics_equal_evalscopes() -> None:
    ds, outputs = _dataset()
    rep = report_json(SCORERS.get("general_fc").score(ds, outputs))
    by_id = {s["id"]: s for s in rep["samples"]}
    for i, (_, should, tools, _, calls) in enumerate(CASES):
        want = evalscope_match(should, tools, calls)
        assert by_id[str(i)]["scores"] == {k: float(v) for k, v in want.items()}, (i, by_id[str(i)])
    rows = {(m["metric"], m["subset"]): m for m in rep["metrics"]}
    for subset in ("a", "b"):
        values = [evalscope_match(c[1], c[2], c[4]) for c in CASES if c[0] == subset]
        for metric, want in evalscope_aggregate(values).items():
            assert rows[(metric, subset)]["score"] == pytest.approx(want, abs=1e-4), (metric, subset)
            assert rows[(metric, subset)]["num"] == len(values)
    overall = evalscope_aggregate([evalscope_match(c[1], c[2], c[4]) for c in CASES])
    assert rows[("tool_call_f1", "OVERALL")]["score"] == pytest.approx(overall["tool_call_f1"], abs=1e-4)
    assert rep["main_metric"] == "tool_call_f1" and rep["summary"]["overall_avg"] == pytest.approx(
        overall["tool_call_f1"], abs=1e-4
    )
    assert 0 < overall["tool_call_f1"] < 1 and overall["count_successful_tool_call"] == 3


def test_table_prints_counts_as_counts() -> None:
    ds, outputs = _dataset()
    table = render_table("m", SCORERS.get("general_fc").score(ds, outputs))
    line = next(ln for ln in table.splitlines() if "count_finish_reason_tool_call" in ln and "| a " in ln)
    assert [c.strip() for c in line.split("|")][-2] == "4", line  # calls in subset a, not "400%"
