"""evalscope General-VQA / General-VMCQ files run on this host, with evalscope's table and an LLM judge."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import ClassVar

from PIL import Image

from .conftest import edgefarm


def _files(tmp: Path) -> tuple[Path, Path]:
    (tmp / "images").mkdir()
    Image.new("RGB", (40, 40), (0, 0, 255)).save(tmp / "images" / "blue.png")
    Image.new("RGB", (40, 40), (255, 0, 0)).save(tmp / "images" / "red.png")
    vqa = tmp / "example_openai.jsonl"
    vqa.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {
                    "messages": [
                        {
                            "role": "user",
                            "content": [
                                {"type": "text", "text": "What colour is this?"},
                                {"type": "image_url", "image_url": {"url": "images/blue.png"}},
                            ],
                        }
                    ],
                    "answer": "Blue",
                },
                {
                    "messages": [
                        {"role": "system", "content": "Answer briefly."},
                        {"role": "user", "content": "Which colour is shown?<image 1>"},
                    ],
                    "image_1": "images/red.png",
                    "answer": "Red",
                },
                {"messages": [{"role": "user", "content": "Say hello."}], "answer": "Hello"},
            ]
        )
        + "\n"
    )
    mcq = tmp / "example.jsonl"
    mcq.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {
                    "question": "<image 1> What colour is this?",
                    "options": ["Red", "Blue", "Green", "Black"],
                    "image_1": "images/blue.png",
                    "answer": "B",
                },
                {"question": "Which one is a fruit?", "options": ["Car", "Apple"], "answer": "B"},
            ]
        )
        + "\n"
    )
    return vqa, mcq


def test_general_vqa_and_vmcq_files_run_and_print_evalscope_tables(tmp_path, local_inventory):
    vqa, mcq = _files(tmp_path)
    inv = str(local_inventory())
    for path, fmt, dataset_label, metric in (
        (vqa, "general_vqa", "General-VQA", "BLEU-1"),
        (mcq, "general_vmcq", "General-VMCQ", "Accuracy"),
    ):
        out = tmp_path / f"runs-{fmt}"
        p = edgefarm(
            "run",
            "--devices",
            "local",
            "--inventory",
            inv,
            "--dataset",
            str(path),
            "--format",
            fmt,
            "--out",
            str(out),
            "--max-output-tokens",
            "8",
        )
        assert p.returncode == 0, p.stderr
        assert dataset_label in p.stdout and metric in p.stdout  # evalscope's table, per device
        run_dir = next(out.iterdir())
        combined = json.loads((run_dir / "report.json").read_text())
        row = combined["devices"][0]
        assert metric in row["metrics"] and 0.0 <= row["metrics"][metric] <= 1.0
        results = [
            json.loads(x) for x in (run_dir / "devices/this-host/results.jsonl").read_text().splitlines()
        ]
        assert [r["status"] for r in results] == ["ok"] * len(results)
        assert all(r["ttft_ms"] > 0 for r in results)


class _Judge(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict]] = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Judge.seen.append(body)
        reply = {"choices": [{"message": {"role": "assistant", "content": "CORRECT"}}]}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def test_llm_judge_adds_an_accuracy_column(tmp_path, local_inventory):
    vqa, _ = _files(tmp_path)
    server = HTTPServer(("127.0.0.1", 0), _Judge)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/v1"
        out = tmp_path / "runs"
        p = edgefarm(
            "run",
            "--devices",
            "local",
            "--inventory",
            str(local_inventory()),
            "--dataset",
            str(vqa),
            "--out",
            str(out),
            "--max-output-tokens",
            "8",
            "--judge",
            url,
            "--judge-model",
            "grader",
        )
        assert p.returncode == 0, p.stderr
    finally:
        server.shutdown()
    assert len(_Judge.seen) == 3 and all(b["model"] == "grader" for b in _Judge.seen)
    combined = json.loads((next(out.iterdir()) / "report.json").read_text())
    assert combined["devices"][0]["metrics"]["Accuracy"] == 1.0
