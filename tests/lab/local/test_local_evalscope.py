"""evalscope General-VQA / General-VMCQ / General-MCQ files run on this host, with evalscope's table and an
LLM judge."""

from __future__ import annotations

import json
from typing import ClassVar

from ..evalscope_examples import write_examples, write_mcq_examples
from .conftest import StubEndpoint, results, run_json, serve


def test_general_vqa_vmcq_and_mcq_files_run_and_print_evalscope_tables(tmp_path, run_here):
    vqa, vmcq = write_examples(tmp_path)
    for path, fmt, dataset_label, metric in (
        (vqa, "general_vqa", "General-VQA", "BLEU-1"),
        (vmcq, "general_vmcq", "General-VMCQ", "Accuracy"),
        (write_mcq_examples(tmp_path / "mcq"), "general_mcq", "General-MCQ", "Accuracy"),
    ):
        flags = ("--dataset", str(path), "--format", fmt, "--max-output-tokens", "8")
        p, run_dir = run_here(*flags, out=tmp_path / f"runs-{fmt}")
        assert p.returncode == 0, p.stderr
        assert dataset_label in p.stdout and metric in p.stdout  # evalscope's table, per device
        row = run_json(run_dir)["devices"][0]
        assert metric in row["metrics"] and 0.0 <= row["metrics"][metric] <= 1.0
        rows = results(run_dir)
        assert [r["status"] for r in rows] == ["ok"] * len(rows)
        assert all(r["ttft_ms"] > 0 for r in rows)


class _Judge(StubEndpoint):
    seen: ClassVar[list[dict]] = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Judge.seen.append(body)
        reply = {"choices": [{"message": {"role": "assistant", "content": "CORRECT"}}]}
        data = json.dumps(reply).encode()
        self.answer(200, data)


def test_llm_judge_adds_an_accuracy_column(tmp_path, run_here):
    vqa, _ = write_examples(tmp_path)
    server = serve(_Judge)
    try:
        url = f"http://127.0.0.1:{server.server_port}/v1"
        judge = ("--judge", url, "--judge-model", "grader")
        p, run_dir = run_here("--dataset", str(vqa), "--max-output-tokens", "8", *judge)
        assert p.returncode == 0, p.stderr
    finally:
        server.shutdown()
    assert len(_Judge.seen) == 3 and all(b["model"] == "grader" for b in _Judge.seen)
    assert run_json(run_dir)["devices"][0]["metrics"]["Accuracy"] == 1.0
