"""evalscope General-FunctionCalling (`general_fc`): evalscope 1.14.1's per-sample values and metrics.

Sources (evalscope 1.14.1 wheel): `evalscope/benchmarks/general_fc/general_fc_adapter.py`
`match_score` (per sample) and `aggregate_scores` (per subset), and
`evalscope/api/benchmark/adapters/function_call_adapter.py` `validate_tool_call`.
- A tool call is what evalscope counts as `finish_reason == "tool_calls"`: here, the runtime
  returned tool calls, which the runners render as the row's whole output, `{"name", "arguments"}`
  JSON (a list for several; android_runner/conversation.py `reply_text`). A model that merely
  writes such JSON inside other text is not calling a tool.
- Valid: every call names a tool of the row with `parameters`, and its arguments (a JSON string is
  parsed) validate against that JSON Schema (jsonschema).
- Per sample: finish_reason_tool_call, successful_tool_call (called AND valid), should_call_tool,
  passed (should call: a successful call; should not: no call). A runner error counts as no call.
- Per subset: tool_call_f1 (F1 of "called" vs "should call"; the main metric),
  count_finish_reason_tool_call, count_successful_tool_call, schema_accuracy (valid calls /
  attempted calls, 0.0 without attempts).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..datasets.evalscope_fc import SHOULD_CALL
from ..datasets.types import Dataset, Sample
from .answers import ScoredAnswers
from .evalscope import OVERALL, round_score, score_all, summarize
from .types import MetricRow, ScoredSample, ScoreReport

FC_MAIN_METRIC = "tool_call_f1"
FC_METRICS = (
    "tool_call_f1",
    "count_finish_reason_tool_call",
    "count_successful_tool_call",
    "schema_accuracy",
)


def native_calls(output: str) -> list[Mapping[str, Any]] | None:
    """The runtime's tool calls as the runners render them (the whole output), or None."""
    text = output.strip()
    if not text or text[0] not in "[{":
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    calls = value if isinstance(value, list) else [value]
    if not calls or not all(isinstance(c, Mapping) and "name" in c and "arguments" in c for c in calls):
        return None
    return list(calls)


def validate_calls(
    calls: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]
) -> tuple[bool, str]:
    """evalscope's validate_tool_call: (all calls valid, the first failure's reason)."""
    from jsonschema import ValidationError, validate

    name = ""
    try:
        for call in calls:
            name = str(call.get("name", ""))
            schema = next((t["function"]["parameters"] for t in tools if t["function"]["name"] == name), None)
            if not schema:
                return False, f"No schema found for tool '{name}'"
            args = call.get("arguments")
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except json.JSONDecodeError as e:
                    return False, f"JSON parse failed for tool '{name}' arguments: {e}"
            validate(instance=args, schema=schema)
    except ValidationError as e:
        return False, f"Schema validation failed for tool '{name}': {e.message}"
    except KeyError as e:
        return False, f"Tool call format error, missing field: {e}"
    except Exception as e:  # noqa: BLE001 - evalscope catches everything here too
        return False, f"Unexpected error during validation: {e}"
    return True, ""


def sample_values(
    should_call: bool, output: str, tools: Sequence[Mapping[str, Any]]
) -> tuple[dict[str, float], str]:
    """evalscope's match_score values for one sample, and the validation failure ("" if none)."""
    calls = native_calls(output)
    is_call = calls is not None
    valid, reason = validate_calls(calls or [], tools)
    success = is_call and valid
    passed = success if should_call else not is_call
    values = {"passed": float(passed), "finish_reason_tool_call": float(is_call),
              "successful_tool_call": float(success), "should_call_tool": float(should_call)}  # fmt: skip
    return values, reason if is_call else ""


def aggregate(values: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """evalscope's aggregate_scores over one subset's samples."""
    finish = success = attempted = valid = tp = fp = fn = 0
    for v in values:
        pred, ok, label = (
            int(v.get("finish_reason_tool_call", 0)),
            int(v.get("successful_tool_call", 0)),
            int(v.get("should_call_tool", 0)),
        )
        finish += pred
        success += ok
        if pred == 1:
            attempted += 1
            valid += ok
        if pred == 1 and label == 1:
            tp += 1
        elif pred == 1 and label == 0:
            fp += 1
        elif pred == 0 and label == 1:
            fn += 1
    schema_accuracy = valid / attempted if attempted > 0 else 0.0
    precision = tp / (tp + fp) if (tp + fp) > 0 else 0.0
    recall = tp / (tp + fn) if (tp + fn) > 0 else 0.0
    f1 = 2 * precision * recall / (precision + recall) if (precision + recall) > 0 else 0.0
    return {"tool_call_f1": f1, "count_finish_reason_tool_call": float(finish),
            "count_successful_tool_call": float(success), "schema_accuracy": schema_accuracy}  # fmt: skip


def _metric_rows(rows: Sequence[ScoredSample]) -> tuple[MetricRow, ...]:
    scored = [s for s in rows if s.status != "skipped"]
    subsets = sorted({s.subset for s in scored})
    groups = [(sub, [s for s in scored if s.subset == sub]) for sub in subsets]
    if len(subsets) > 1:
        groups.append((OVERALL, scored))
    out = []
    for metric in FC_METRICS:
        for sub, group in groups:
            if group:
                out.append(
                    MetricRow(metric, sub, len(group), round_score(aggregate([s.scores for s in group])[metric]))
                )
    return tuple(out)


def score_fc(
    dataset: Dataset, outputs: Mapping[str, str | None], answers: ScoredAnswers | None = None
) -> ScoreReport:
    """General-FunctionCalling: evalscope's per-sample values, then its metrics per subset."""

    def one(sample: Sample, out: str) -> tuple[dict[str, float], dict[str, Any]]:
        values, reason = sample_values(sample.reference == SHOULD_CALL, out, sample.tools)
        return values, ({"error_reason": reason} if reason else {})

    rows = score_all(dataset, outputs, "passed", ("passed",), one, lambda s: bool(s.get("passed")), answers)
    report = summarize("general_fc", FC_MAIN_METRIC, rows, _metric_rows(rows), {})
    scored = [s.scores for s in rows if s.status != "skipped"]
    overall = round_score(aggregate(scored)[FC_MAIN_METRIC]) if scored else 0.0
    return dataclasses.replace(report, summary=dataclasses.replace(report.summary, overall_avg=overall))
