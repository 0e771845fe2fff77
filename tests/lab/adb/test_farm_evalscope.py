"""evalscope General-VQA and General-VMCQ files on every emulated phone: evalscope's table per phone
and the metrics in the combined report."""

from __future__ import annotations

import json

from ..evalscope_examples import VQA_IMAGE_URL, VQA_TEXT, write_examples
from .test_farm_run import PHONES, edgefarm, inventory


def test_general_vqa_and_vmcq_on_every_phone(adb_lab, tmp_path):
    vqa, mcq = write_examples(tmp_path, vqa_rows=(VQA_IMAGE_URL, VQA_TEXT), vmcq="tsv")
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
