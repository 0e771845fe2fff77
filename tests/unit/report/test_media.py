"""The drill-down's prompts and media (report/media.py): dataset file names are data, never a path."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from android_runner.contract import SampleResult
from orchestrator.devices.types import DeviceInfo
from orchestrator.farm.run_json import RunJson
from orchestrator.farm.types import DeviceOutcome
from orchestrator.report.combine import build_report, device_row, sample_rows
from orchestrator.report.media import with_samples
from orchestrator.report.printers import PRINTERS

ODD = "x'; rm -rf ~ $(id) ..png"  # a legal file name a shell would love


def _dataset(root: Path) -> Path:
    split = root / "data" / "test"
    (split / "images").mkdir(parents=True)
    (split / "images" / ODD).write_bytes(b"\x89PNG fake image bytes")
    (split / "images" / "notes.txt").write_bytes(b"not an image")
    rows = [
        {"test_id": "IMG-1", "modality": "image", "task": "qa", "prompt": "What is <b>this</b>?",
         "images": [f"images/{ODD}"], "reference": "a cat", "reference_variants": ["a cat"]},
        {"test_id": "TXT-1", "modality": "text", "task": "qa", "prompt": "Say hi", "reference": "hi",
         "reference_variants": ["hi"]},
    ]  # fmt: skip
    (split / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def test_prompts_and_media_copied_under_their_hash_inside_the_run_folder(tmp_path):
    ds = _dataset(tmp_path / "ds")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    run = {"run_id": "r", "dataset": {"path": str(ds), "format": "edgemmeval"}}
    results = [
        SampleResult(id="IMG-1", status="ok", output="a cat"),
        SampleResult(id="TXT-1", status="ok", output="hi"),
    ]
    per = {"p": (results, None)}
    report = build_report(
        RunJson.from_dict(run),
        [device_row(DeviceInfo.from_dict({"name": "p"}), DeviceOutcome(name="p", kind=""), results, None)],
        sample_rows(per),
    )
    before = {p for p in tmp_path.rglob("*")}
    shown = with_samples(report, run_dir)
    image, text = shown.samples
    digest = hashlib.sha256(b"\x89PNG fake image bytes").hexdigest()[:20]
    assert image.media == (f"media/{digest}.png",) and image.prompt == "What is <b>this</b>?"
    assert text.media == () and text.prompt == "Say hi"
    written = {p for p in tmp_path.rglob("*")} - before
    assert written == {run_dir / "media", run_dir / "media" / f"{digest}.png"}  # nothing else, nowhere else
    page = PRINTERS.get("html")(shown)
    assert (
        f"src='media/{digest}.png'" in page and ODD not in page and "What is &lt;b&gt;this&lt;/b&gt;?" in page
    )
    # `edgefarm report` (write=False) links the copies already there and writes nothing
    again = with_samples(report, run_dir, write=False)
    assert again.samples[0].media == image.media


def test_a_dataset_that_is_gone_leaves_the_report_as_it_was(tmp_path):
    run = {"run_id": "r", "dataset": {"path": str(tmp_path / "moved"), "format": "edgemmeval"}}
    results = [SampleResult(id="A", status="ok", output="x")]
    report = build_report(
        RunJson.from_dict(run),
        [device_row(DeviceInfo.from_dict({"name": "p"}), DeviceOutcome(name="p", kind=""), results, None)],
        sample_rows({"p": (results, None)}),
    )
    assert with_samples(report, tmp_path) is report and not (tmp_path / "media").exists()
