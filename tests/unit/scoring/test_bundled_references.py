"""The bundled 200-row dataset scored with its own references: all pass; wrong answers fail."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from orchestrator.cli import main
from orchestrator.datasets import BUNDLED_DATASET, load_dataset, require_valid
from orchestrator.scoring import report_json
from orchestrator.scoring.edgemm import score_edgemm, score_sample
from orchestrator.scoring.metrics import VERDICT_OK

pytestmark = pytest.mark.skipif(
    not (BUNDLED_DATASET / "data" / "test" / "metadata.jsonl").exists(), reason="bundled dataset not built"
)


@pytest.fixture(scope="module")
def bundled():
    return require_valid(load_dataset(str(BUNDLED_DATASET)))


def test_every_row_passes_with_its_own_reference(bundled) -> None:
    assert len(bundled.samples) == 200
    failing = [(s.id, score_sample(s, s.reference)) for s in bundled.samples]
    failing = [(sid, sc.metric, sc.score) for sid, sc in failing if not sc.passed]
    assert failing == []
    report = report_json(score_edgemm(bundled, {s.id: s.reference for s in bundled.samples}))
    assert report["summary"]["total_passed"] == 200 and report["summary"]["pass_rate_pct"] == 100.0
    assert {m: v["total"] for m, v in report["by_modality"].items()} == bundled.by_modality


def test_one_wrong_answer_per_modality_fails(bundled) -> None:
    firsts = {}
    for s in bundled.samples:
        if s.expected_call is not None and s.expected_call.refuse:
            continue  # a refusal row passes on any text; the call rows are the ones to break
        firsts.setdefault(s.modality, s)
    assert len(firsts) == 7
    for modality, s in firsts.items():
        wrong = "zebra umbrella volcano" if modality != "tool_call" else "The weather is nice."
        sc = score_sample(s, wrong)
        assert not sc.passed and sc.score < 0.3, (modality, s.id, sc)


def test_refusal_rows_fail_when_a_call_is_made(bundled) -> None:
    refusals = [s for s in bundled.samples if s.expected_call is not None and s.expected_call.refuse]
    assert refusals
    for s in refusals:
        name = s.tools[0]["function"]["name"]
        assert not score_sample(s, json.dumps({"name": name, "arguments": {}})).passed


def test_cli_default_dataset_scores_references(tmp_path: Path, bundled) -> None:
    results = tmp_path / "results.json"
    results.write_text(json.dumps({s.id: s.reference for s in bundled.samples}), encoding="utf-8")
    r = CliRunner().invoke(main, ["score", str(results)], catch_exceptions=False)
    assert r.exit_code == 0, r.stderr
    summary = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["summary"]
    assert summary["total_scored"] == 200 and summary["verdict"] == VERDICT_OK and summary["skipped"] == []
