"""`edgefarm score` through click: report file, stdout/stderr split, bad RESULTS.json variants."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from orchestrator.cli import main

ROWS = [
    {
        "test_id": "TXT-001",
        "modality": "text",
        "task": "qa",
        "prompt": "Capital of France?",
        "reference": "Paris",
        "reference_variants": ["Paris", "It is Paris"],
    },
    {
        "test_id": "TXT-002",
        "modality": "text",
        "task": "qa",
        "prompt": "2 + 2?",
        "reference": "4",
        "reference_variants": ["4", "four"],
    },
    {
        "test_id": "STO-001",
        "modality": "structured_output",
        "task": "regex",
        "prompt": "A date?",
        "reference": "2024-01-02",
        "constraint_type": "regex",
        "pattern": r"\d{4}-\d{2}-\d{2}",
    },
    {
        "test_id": "TCL-001",
        "modality": "tool_call",
        "task": "tool_call",
        "prompt": "Weather in Paris?",
        "reference": '{"name":"get_weather","arguments":{"city":"Paris"}}',
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "w",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
                },
            }
        ],
        "expected_call": {"name": "get_weather", "arguments": {"city": "Paris"}},
    },
]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    root = tmp_path / "ds"
    root.mkdir()
    (root / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return root


def run(args: list[str]):
    return CliRunner().invoke(main, args, catch_exceptions=False)


def write(tmp_path: Path, text: str, name: str = "results.json") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_scores_and_writes_report_next_to_results(tmp_path: Path, data: Path) -> None:
    outputs = {
        "TXT-001": "Paris",
        "TXT-002": "4",
        "STO-001": "2024-05-06",
        "TCL-001": 'get_weather(city="paris")',
    }
    results = write(tmp_path, json.dumps(outputs))
    r = run(["score", str(results), "--dataset", str(data)])
    assert r.exit_code == 0, r.stderr
    assert r.stdout.strip() == str(tmp_path / "report.json")
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["summary"]["total_scored"] == 4
    assert report["summary"]["verdict"] == "✓ INFERENCE WORKING"
    assert "✓ INFERENCE WORKING" in r.stderr and "structured_output" in r.stderr


def test_out_option_skips_and_issues(tmp_path: Path, data: Path) -> None:
    results = write(tmp_path, json.dumps({"TXT-001": "Berlin", "TXT-002": None}))
    out = tmp_path / "sub" / "r.json"
    r = run(["score", str(results), "--dataset", str(data), "--out", str(out)])
    assert r.exit_code == 0 and r.stdout.strip() == str(out)
    summary = json.loads(out.read_text(encoding="utf-8"))["summary"]
    assert summary["skipped"] == ["TXT-002", "STO-001", "TCL-001"]
    assert summary["verdict"] == "✗ ISSUES DETECTED"
    assert "✗ ISSUES DETECTED" in r.stderr


def test_nothing_scored_note_on_stderr_and_in_report(tmp_path: Path, data: Path) -> None:
    results = write(tmp_path, json.dumps({"IMG-001": "a cat"}))
    r = run(["score", str(results), "--dataset", str(data)])
    assert r.exit_code == 0
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["summary"]["total_scored"] == 0
    assert "does not map test ids to outputs" in report["summary"]["note"]
    assert "does not map test ids" in r.stderr and "not in the dataset: IMG-001" in r.stderr


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{oops", "results.json:1:2: not valid JSON"),
        ('["TXT-001", "Paris"]', "results.json: top level is a list"),
        ('{"TXT-001": "Paris", "TXT-002": 4}', "results.json key 'TXT-002': output is int 4"),
        ('{"TXT-001": ["Paris"]}', "results.json key 'TXT-001': output is list"),
    ],
)
def test_bad_results_file_is_a_clear_error(tmp_path: Path, data: Path, text: str, says: str) -> None:
    results = write(tmp_path, text)
    r = run(["score", str(results), "--dataset", str(data)])
    assert r.exit_code == 2
    assert says in r.stderr and "fix:" in r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "report.json").exists()


def test_missing_results_file(tmp_path: Path, data: Path) -> None:
    r = run(["score", str(tmp_path / "nope.json"), "--dataset", str(data)])
    assert r.exit_code == 2 and "results file not found" in r.stderr


def test_unknown_format_suggests(tmp_path: Path, data: Path) -> None:
    results = write(tmp_path, "{}")
    r = run(["score", str(results), "--dataset", str(data), "--format", "edgemmevl"])
    assert r.exit_code == 2 and "edgemmeval" in r.stderr


def test_summary_printer_tolerates_other_scorers_reports() -> None:
    import io

    from rich.console import Console

    from orchestrator.cli.score import print_summary
    from orchestrator.scoring import read_report_json

    buf = io.StringIO()
    report = {
        "summary": {"total_scored": 3, "skipped": 1, "overall_avg": 0.5},
        "samples": [{"id": "9", "status": "skipped", "scores": {}}],
        "metrics": [{"metric": "bleu-1", "subset": "default", "num": 3, "score": 0.5}],
    }
    print_summary(read_report_json({"format": "general_vqa", **report}), Console(file=buf, width=100), "vqa")
    text = buf.getvalue()
    assert "vqa: scored 3, average score 0.5, skipped 1" in text and "bleu-1" in text
