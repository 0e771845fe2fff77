"""evalscope General-VQA and General-VMCQ files on every emulated phone: evalscope's table per phone
and the metrics in the combined report."""

from __future__ import annotations

import json

from PIL import Image

from .test_farm_run import PHONES, edgefarm, inventory


def _datasets(tmp):
    (tmp / "images").mkdir()
    Image.new("RGB", (40, 40), (0, 0, 255)).save(tmp / "images" / "blue.png")
    vqa = tmp / "colours.jsonl"
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
                {"messages": [{"role": "user", "content": "Say hello."}], "answer": "Hello"},
            ]
        )
        + "\n"
    )
    mcq = tmp / "quiz.tsv"
    mcq.write_text(
        "question\toptions\tanswer\timage_1\n"
        '<image 1> What colour is this?\t["Red", "Blue"]\tB\timages/blue.png\n'
        'Which one is a fruit?\t["Car", "Apple", "Rock"]\tB\t\n'
    )
    return vqa, mcq


def test_general_vqa_and_vmcq_on_every_phone(adb_lab, tmp_path):
    vqa, mcq = _datasets(tmp_path)
    inv = inventory(adb_lab, tmp_path)
    for path, fmt, label, metric in (
        (vqa, "general_vqa", "General-VQA", "ROUGE-L-F"),
        (mcq, "general_vmcq", "General-VMCQ", "Accuracy"),
    ):
        out = tmp_path / f"runs-{fmt}"
        p = edgefarm(
            adb_lab,
            "run",
            "--devices",
            "all",
            "--inventory",
            str(inv),
            "--dataset",
            str(path),
            "--format",
            fmt,
            "--max-output-tokens",
            "8",
            "--sample-timeout",
            "60",
            "--out",
            str(out),
        )
        assert p.returncode == 0, p.stderr[-3000:]
        for name in PHONES:
            assert f"{name}:" in p.stdout  # one evalscope table per phone
        assert p.stdout.count(label) >= len(PHONES)
        combined = json.loads((next(out.iterdir()) / "report.json").read_text())
        rows = {r["device"]: r for r in combined["devices"]}
        for name in PHONES:
            assert rows[name]["samples"] == 2 and rows[name]["status_counts"].get("ok") == 2, rows[name]
            assert metric in rows[name]["metrics"], rows[name]["metrics"]
