"""The EdgeMMEval scorer end to end on hand-built samples: routing, report shape, verdict edges."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.datasets.types import Constraint, Dataset, ExpectedCall, Part, Sample, Turn
from orchestrator.errors import ResultsError
from orchestrator.scoring import SCORERS, report_json
from orchestrator.scoring.edgemm import read_results_file, score_edgemm, score_sample
from orchestrator.scoring.metrics import VERDICT_ISSUES, VERDICT_OK

TOOLS = (
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    },
)


def sample(sid: str, modality: str = "text", task: str = "qa", refs=("Paris",), **kw) -> Sample:
    turn = Turn((Part("text", text="q?"),))
    return Sample(
        id=sid, modality=modality, task=task, turns=(turn,), reference=refs[0], references=tuple(refs), **kw
    )


def dataset(*samples: Sample) -> Dataset:
    return Dataset("t", "edgemmeval", Path("/tmp"), (), samples)


JSON_ROW = sample(
    "STO-001",
    "structured_output",
    "json_schema",
    refs=('{"city":"Paris","country":"France"}',),
    constraint=Constraint(
        "json_schema",
        schema={
            "type": "object",
            "required": ["city", "country"],
            "properties": {"city": {"type": "string"}},
        },
    ),
)
TOOL_ROW = sample(
    "TCL-001",
    "tool_call",
    "tool_call",
    refs=('{"name":"get_weather","arguments":{"city":"Paris"}}',),
    tools=TOOLS,
    expected_call=ExpectedCall("get_weather", {"city": "Paris"}),
)
REFUSE_ROW = sample(
    "TCL-002",
    "tool_call",
    "refusal",
    refs=("I can't do that.",),
    tools=TOOLS,
    expected_call=ExpectedCall(refuse=True),
)


def test_routing_and_metric_names() -> None:
    assert score_sample(sample("TXT-1"), "Paris").metric == "bleu1"
    summ = sample("TXT-2", task="summarization", refs=("the council approved the new budget",))
    s = score_sample(summ, "The council approved a new budget")
    assert s.metric == "rougeL" and s.passed
    assert score_sample(sample("TXT-3", task="summarize"), "x").metric == "rougeL"
    assert score_sample(JSON_ROW, "{}").metric == "structured"
    assert score_sample(TOOL_ROW, "").metric == "tool_call"


def test_bleu_threshold_is_inclusive() -> None:
    row = sample("TXT-1", refs=("a b",))
    assert score_sample(row, "a c").score == 0.5 and score_sample(row, "a c").passed
    assert not score_sample(row, "a c d").passed  # 1/3


def test_structured_fenced_json_passes_with_bleu_of_the_json() -> None:
    s = score_sample(JSON_ROW, 'Here it is:\n```json\n{"city": "Paris", "country": "France"}\n```')
    assert s.passed and s.format.valid and s.score == 1.0 and s.content_bleu == 1.0


def test_structured_malformed_json_scores_zero_even_with_matching_words() -> None:
    s = score_sample(JSON_ROW, '{"city": "Paris", "country": "France"')
    assert not s.passed and s.score == 0.0 and not s.format.valid
    assert s.format.failed == "no JSON found in the output"
    assert s.content_bleu > 0.3  # the words are there; the format is not


def test_structured_valid_format_but_wrong_content_fails() -> None:
    s = score_sample(JSON_ROW, '{"city": "Rome", "country": "Italy", "note": "x"}')
    assert s.format.valid and not s.passed and s.score == s.content_bleu < 0.3


def test_tool_rows() -> None:
    assert score_sample(TOOL_ROW, '{"name": "get_weather", "arguments": {"city": "paris"}}').score == 1.0
    wrong = score_sample(TOOL_ROW, '{"name": "get_time", "arguments": {"city": "Paris"}}')
    assert wrong.score == 0.0 and "expected 'get_weather'" in wrong.tool.failed
    extra = score_sample(TOOL_ROW, '{"name": "get_weather", "arguments": {"city": "Paris", "when": "now"}}')
    assert not extra.passed and "unexpected argument 'when'" in extra.tool.failed
    assert score_sample(REFUSE_ROW, "Sorry, I cannot book flights.").passed
    assert not score_sample(REFUSE_ROW, "").passed
    assert not score_sample(REFUSE_ROW, "get_weather(city='Paris')").passed


def test_report_shape_and_sub_results() -> None:
    ds = dataset(sample("TXT-1"), JSON_ROW, TOOL_ROW, sample("IMG-1", "image", "vqa"))
    outputs = {
        "TXT-1": "Paris",
        "STO-001": '{"city": "Paris"}',
        "TCL-001": 'get_weather(city="Paris")',
        "EXTRA-9": "not in the dataset",
    }
    report = report_json(score_edgemm(ds, outputs))
    assert set(report) >= {"summary", "by_modality", "samples"}
    summary = report["summary"]
    assert summary["total_scored"] == 3 and summary["total_passed"] == 2
    assert summary["skipped"] == ["IMG-1"] and summary["unknown_ids"] == ["EXTRA-9"]
    assert summary["pass_rate_pct"] == 66.67 and summary["verdict"] == VERDICT_ISSUES
    rows = {r["test_id"]: r for r in report["samples"]}
    assert set(rows) == {"TXT-1", "STO-001", "TCL-001"}
    sto = rows["STO-001"]
    assert sto["metric"] == "structured" and sto["format_valid"] is False
    assert sto["failed_check"].startswith("schema: 'country' is a required property")
    tcl = rows["TCL-001"]
    assert tcl["parsed_call"] == {"name": "get_weather", "arguments": {"city": "Paris"}, "syntax": "python"}
    assert tcl["failed_check"] is None and tcl["passed"] is True
    assert report["by_modality"]["structured_output"] == {"avg_score": 0.0, "passed": 0, "total": 1}
    assert report["by_modality"]["text"] == {"avg_score": 1.0, "passed": 1, "total": 1}
    assert "image" not in report["by_modality"]
    json.dumps(report, ensure_ascii=False)  # serialisable as is


def _verdict_report(n: int, passing: int) -> dict:
    ds = dataset(*(sample(f"TXT-{i}") for i in range(n)))
    return report_json(score_edgemm(ds, {f"TXT-{i}": "Paris" if i < passing else "London" for i in range(n)}))


@pytest.mark.parametrize(
    ("n", "passing", "pct", "verdict"),
    [
        (5, 4, 80.0, VERDICT_OK),  # exactly 80%
        (10, 8, 80.0, VERDICT_OK),
        (99, 79, 79.8, VERDICT_ISSUES),  # just below
        (1000, 799, 79.9, VERDICT_ISSUES),
        (4, 3, 75.0, VERDICT_ISSUES),
        (3, 3, 100.0, VERDICT_OK),
        (2, 0, 0.0, VERDICT_ISSUES),
    ],
)
def test_verdict_edges(n: int, passing: int, pct: float, verdict: str) -> None:
    summary = _verdict_report(n, passing)["summary"]
    assert summary["pass_rate_pct"] == pct and summary["verdict"] == verdict
    assert summary["total_passed"] == passing and summary["total_scored"] == n


def test_missing_and_null_are_skipped_but_empty_string_is_scored_and_fails() -> None:
    ds = dataset(sample("A"), sample("B"), sample("C"))
    report = report_json(score_edgemm(ds, {"B": None, "C": ""}))
    assert report["summary"]["skipped"] == ["A", "B"]
    assert report["summary"]["total_scored"] == 1
    assert report["samples"] == [
        {
            "test_id": "C",
            "modality": "text",
            "task": "qa",
            "metric": "bleu1",
            "score": 0.0,
            "passed": False,
            "strict_passed": False,  # scoring/strict.py, beside the card's verdict
            "reference": "Paris",
        }
    ]


def test_nothing_scored_says_why() -> None:
    report = report_json(score_edgemm(dataset(sample("A"), sample("B")), {"a": "Paris", "IMG-001": "x"}))
    summary = report["summary"]
    assert summary["total_scored"] == 0 and summary["verdict"] == VERDICT_ISSUES
    assert summary["overall_avg"] == 0.0 and summary["pass_rate_pct"] == 0.0
    assert "does not map test ids to outputs" in summary["note"]
    assert report["by_modality"] == {} and report["samples"] == []
    assert "note" not in _verdict_report(1, 1)["summary"]


def test_scores_are_rounded_but_pass_uses_the_exact_value() -> None:
    row = sample("T", refs=("a b c",))
    report = report_json(score_edgemm(dataset(row), {"T": "a x y"}))
    assert report["samples"][0]["score"] == 0.3333 and report["summary"]["overall_avg"] == 0.3333


def test_registered_scorer() -> None:
    ds = dataset(sample("A"))
    assert SCORERS.get("edgemmeval").score(ds, {"A": "Paris"}) == score_edgemm(ds, {"A": "Paris"})


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        ("{not json", ":1:2", "not valid JSON"),
        ('["IMG-001", "a cat"]', "results.json", "top level is a list"),
        ('"IMG-001"', "results.json", "top level is a string"),
        ('{"IMG-001": "ok", "IMG-002": 3}', "results.json key 'IMG-002'", "output is int 3"),
        ('{"IMG-001": {"text": "x"}}', "results.json key 'IMG-001'", "output is dict"),
        ('{"IMG-001": "a", "IMG-001": "b"}', "results.json key 'IMG-001'", "appears twice"),
    ],
)
def test_read_results_file_errors_name_file_and_key(tmp_path: Path, text: str, where: str, what: str) -> None:
    path = tmp_path / "results.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ResultsError) as e:
        read_results_file(path)
    assert where in e.value.where and what in e.value.what and e.value.fix


def test_read_results_file_ok_and_missing(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text('\ufeff{"IMG-001": "a cat", "IMG-002": null, "IMG-003": ""}', encoding="utf-8")
    assert read_results_file(path) == {"IMG-001": "a cat", "IMG-002": None, "IMG-003": ""}
    with pytest.raises(ResultsError, match="not found"):
        read_results_file(tmp_path / "nope.json")
