"""A sample whose scoring raises is that sample's scoring error, never the run's: via the scorer API,
`edgefarm score`, and inside a device thread."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from click.testing import CliRunner

from orchestrator.cli import main
from orchestrator.datasets import BUNDLED_DATASET, load_dataset
from orchestrator.scoring import SCORERS, read_report_json, report_json, score_safely

POISON = "[" * 1000  # a structured-output "answer" that made json/jsonschema recurse past the limit


def _bundled():
    return load_dataset(str(BUNDLED_DATASET))


def test_poisoned_structured_answer_is_a_scoring_error_via_the_api():
    ds = _bundled()
    sto = [s.id for s in ds.samples if s.modality == "structured_output"][:2]
    txt = next(s for s in ds.samples if s.modality == "text")
    report = SCORERS.get("edgemmeval").score(ds, {sto[0]: POISON, sto[1]: POISON, txt.id: txt.reference})
    rows = {s.id: s for s in report.samples}
    assert rows[sto[0]].status == "error" and rows[sto[0]].passed is False and rows[sto[0]].score == 0.0
    assert rows[sto[0]].error.startswith("RecursionError")
    assert rows[txt.id].status == "scored" and rows[txt.id].passed
    assert report.summary.scoring_errors == 2 and report.summary.total_scored == 3
    data = report_json(report)
    assert data["summary"]["scoring_errors"] == 2
    assert [r["scoring_error"][:14] for r in data["samples"] if "scoring_error" in r] == [
        "RecursionError"
    ] * 2
    assert read_report_json(data).summary.scoring_errors == 2  # the record survives its JSON


def test_poisoned_answer_in_a_device_thread_does_not_raise():
    """Threads have the same recursion limit but a smaller stack than the main thread's."""
    ds = _bundled()
    sto = next(s.id for s in ds.samples if s.modality == "structured_output")
    got: list = []
    t = threading.Thread(
        target=lambda: got.append(score_safely(SCORERS.get("edgemmeval").score, ds, {sto: POISON}))
    )
    t.start()
    t.join(60)
    assert got and got[0].summary.scoring_errors == 1


def test_a_scorer_that_raises_as_a_whole_still_gives_a_record():
    ds = _bundled()

    def broken(dataset, outputs):
        raise KeyError("boom")

    report = score_safely(broken, ds, {ds.samples[0].id: "x"})
    assert report.summary.scoring_errors == 1 and "KeyError" in report.summary.note
    assert report_json(report)["samples"][0]["scoring_error"].startswith("KeyError")


def test_edgefarm_score_on_a_poisoned_file_reports_the_error_without_a_traceback(tmp_path: Path):
    ds = _bundled()
    sto = next(s.id for s in ds.samples if s.modality == "structured_output")
    results = tmp_path / "results.json"
    results.write_text(json.dumps({sto: POISON, "IMG-001": "a cat"}), encoding="utf-8")
    r = CliRunner().invoke(main, ["score", str(results)], catch_exceptions=False)
    assert r.exit_code == 0, r.stderr
    assert "Traceback" not in r.stderr and "could not be scored" in r.stderr and sto in r.stderr
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["summary"]["scoring_errors"] == 1 and report["summary"]["total_scored"] == 2
    row = next(r for r in report["samples"] if r["test_id"] == sto)
    assert row["passed"] is False and row["scoring_error"].startswith("RecursionError")
