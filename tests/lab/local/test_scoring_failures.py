"""Scoring that fails after the device ran: the run still writes every report."""

from __future__ import annotations

from typing import ClassVar

from ..evalscope_examples import write_examples
from .conftest import StubEndpoint, device_json, run_json, serve


class _Broken(StubEndpoint):
    """An OpenAI-compatible judge that answers every request with HTTP 500."""

    seen: ClassVar[list[str]] = []

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        _Broken.seen.append(self.path)
        data = b'{"error": {"message": "CUDA out of memory"}}'
        self.answer(500, data)


def test_a_judge_answering_500_marks_accuracy_failed_and_every_report_is_written(tmp_path, run_here):
    vqa, _ = write_examples(tmp_path)
    server = serve(_Broken)
    try:
        judge = ("--judge", f"http://127.0.0.1:{server.server_port}/v1", "--judge-model", "grader")
        p, run_dir = run_here("--dataset", str(vqa), "--max-output-tokens", "8", *judge)
    finally:
        server.shutdown()
        server.server_close()
    assert p.returncode == 0, p.stderr  # the device ran every sample; the judge's failure is a metric's
    assert "Traceback" not in p.stderr and len(_Broken.seen) == 1
    for name in ("report.json", "report.md", "report.html"):
        assert (run_dir / name).is_file(), name
    report = device_json(run_dir, "report.json")
    assert "HTTP 500" in report["summary"]["judge_error"]
    accuracy = [m for m in report["metrics"] if m["metric"] == "Accuracy"]
    assert accuracy and accuracy[0]["score"] is None and "judge failed" in accuracy[0]["failed"]
    row = run_json(run_dir)["devices"][0]
    assert "Accuracy" not in row["metrics"] and "BLEU-1" in row["metrics"]  # the other metrics stay
    assert "failed" in p.stdout  # evalscope's table says so in the Score column
    assert "LLM judge failed, Accuracy not scored" in (run_dir / "report.md").read_text()
