"""The spine, for real: `edgefarm run` on this host with the litert_lm runtime and the tiny model."""

from __future__ import annotations

import json
import math
import struct
import wave
from pathlib import Path

from PIL import Image

from .conftest import TINY_MM, TINY_TEXT, edgefarm

MODALITY_BY_MEDIA = {None: "text", "image": "image", "audio": "audio"}


def _write_wav(path: Path, seconds: float = 0.5, hz: float = 440.0) -> None:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        n = int(16000 * seconds)
        w.writeframes(
            b"".join(struct.pack("<h", int(8000 * math.sin(2 * math.pi * hz * i / 16000))) for i in range(n))
        )


def canned_dataset(root: Path, canned: list[dict]) -> Path:
    """An EdgeMMEval-format dataset whose rows are the model's canned prompts (answers as references)."""
    split = root / "data" / "test"
    (split / "images").mkdir(parents=True)
    (split / "audio").mkdir(parents=True)
    Image.new("RGB", (64, 48), (200, 30, 30)).save(split / "images" / "red.png")
    _write_wav(split / "audio" / "tone.wav")
    rows = []
    for i, c in enumerate(canned, 1):
        row = {
            "test_id": f"CAN-{i:03d}",
            "task": "qa",
            "reference": c["answer"],
            "reference_variants": [c["answer"]],
        }
        if c.get("history"):
            # the user turns of the canned exchange; the model's own replies come from the model
            users = [h["text"] for h in c["history"] if h["role"] == "user"]
            row |= {"modality": "multi_turn", "task": "context_retention", "turns": [*users, c["prompt"]]}
        else:
            row |= {"modality": MODALITY_BY_MEDIA[c.get("media")], "prompt": c["prompt"]}
        if c.get("media") == "image":
            row["images"] = ["images/red.png"]
        if c.get("media") == "audio":
            row["audio"] = ["audio/tone.wav"]
        rows.append(row)
    (split / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def _only_run_dir(out: Path) -> Path:
    runs = [p for p in out.iterdir() if p.is_dir()]
    assert len(runs) == 1, runs
    return runs[0]


def _results(run_dir: Path, device: str = "this-host") -> list[dict]:
    lines = (run_dir / "devices" / device / "results.jsonl").read_text().splitlines()
    return [json.loads(x) for x in lines if x.strip()]


def test_canned_prompts_are_answered_exactly_with_real_figures(tmp_path, canned, local_inventory):
    ds = canned_dataset(tmp_path / "canned", canned)
    out = tmp_path / "runs"
    p = edgefarm(
        "run",
        "--devices",
        "local",
        "--inventory",
        str(local_inventory()),
        "--dataset",
        str(ds),
        "--out",
        str(out),
    )
    assert p.returncode == 0, p.stderr
    run_dir = _only_run_dir(out)
    results = {r["id"]: r for r in _results(run_dir)}
    assert len(results) == len(canned)
    for i, c in enumerate(canned, 1):
        r = results[f"CAN-{i:03d}"]
        assert r["status"] == "ok", r
        assert r["output"] == c["answer"], (c, r["output"])
        assert r["init_ms"] > 0 and r["ttft_ms"] > 0 and r["wall_ms"] > 0
        assert r["prefill_tokens"] > 0 and r["prefill_tps"] > 0
        assert r["decode_tokens"] > 0 and r["decode_tps"] > 0
        assert r["peak_rss_mb"] > 0 and r["peak_hwm_mb"] >= r["peak_rss_mb"] * 0.5
        assert r["peak_file_mb"] is not None and r["peak_anon_mb"] > 0
    report = json.loads((run_dir / "devices" / "this-host" / "report.json").read_text())
    assert report["summary"]["total_scored"] == len(canned)
    assert report["summary"]["pass_rate_pct"] == 100.0
    assert report["summary"]["verdict"] == "✓ INFERENCE WORKING"
    assert "this-host" in p.stdout + p.stderr  # the comparison table names the device


def test_bundled_slice_of_every_modality_writes_the_whole_run_directory(tmp_path, local_inventory):
    out = tmp_path / "runs"
    p = edgefarm(
        "run",
        "--devices",
        "all",
        "--inventory",
        str(local_inventory()),
        "--per-modality",
        "2",
        "--out",
        str(out),
        "--max-output-tokens",
        "16",
    )
    assert p.returncode == 0, p.stderr
    run_dir = _only_run_dir(out)
    for name in ("run.json", "report.json", "report.md", "report.html"):
        assert (run_dir / name).is_file(), name
    run = json.loads((run_dir / "run.json").read_text())
    assert len(run["model"]["sha256"]) == 64 and len(run["dataset"]["sha256"]) == 64
    assert run["versions"]["litert-lm-api"] == "0.18.1"
    dev = run_dir / "devices" / "this-host"
    for name in (
        "device.json",
        "outcome.json",
        "results.jsonl",
        "results.json",
        "report.json",
        "job/job.jsonl",
    ):
        assert (dev / name).is_file(), name
    results = _results(run_dir)
    modalities = {s["modality"] for s in json.loads((dev / "report.json").read_text())["samples"]}
    assert modalities == {
        "image",
        "audio",
        "text",
        "multi_turn",
        "combination",
        "structured_output",
        "tool_call",
    }
    assert len(results) == 14
    ok = [r for r in results if r["status"] == "ok"]
    assert len(ok) >= 12, [(r["id"], r["status"], r["error"]) for r in results if r["status"] != "ok"]
    for r in ok:
        assert r["ttft_ms"] > 0 and r["decode_tps"] > 0 and r["peak_rss_mb"] > 0
        assert r["decode_tokens"] <= 16 * max(1, len(r["turns"]))
    combined = json.loads((run_dir / "report.json").read_text())
    row = combined["devices"][0]
    assert row["device"] == "this-host" and row["samples"] == 14
    assert row["ttft_ms_p50"] > 0 and row["decode_tps_p50"] > 0 and row["peak_rss_mb"] > 0
    md = (run_dir / "report.md").read_text()
    assert "| this-host |" in md and "TTFT p50" in md


def test_a_file_that_is_not_a_model_fails_before_anything_is_written(tmp_path):
    bad = tmp_path / "broken.litertlm"
    bad.write_bytes(b"\0" * 4096)
    out = tmp_path / "runs"
    p = edgefarm("run", "--devices", "local", "--model", str(bad), "--out", str(out), "--limit", "2")
    assert p.returncode == 4, p.stderr
    assert "broken.litertlm" in p.stderr and "fix:" in p.stderr and "Traceback" not in p.stderr
    assert not out.exists()


def test_missing_model_is_a_clear_error(tmp_path):
    p = edgefarm("run", "--devices", "local", "--model", str(tmp_path / "nope.litertlm"), "--limit", "1")
    assert p.returncode == 4 and "model file not found" in p.stderr


def test_text_only_model_reports_media_samples_unsupported(tmp_path, local_inventory):
    out = tmp_path / "runs"
    p = edgefarm(
        "run",
        "--devices",
        "local",
        "--inventory",
        str(local_inventory()),
        "--model",
        str(TINY_TEXT),
        "--modality",
        "image",
        "--modality",
        "text",
        "--per-modality",
        "2",
        "--out",
        str(out),
        "--max-output-tokens",
        "8",
    )
    assert p.returncode == 0, p.stderr
    run_dir = _only_run_dir(out)
    by_status = {}
    for r in _results(run_dir):
        by_status.setdefault(r["status"], []).append(r)
    assert len(by_status["unsupported"]) == 2 and len(by_status["ok"]) == 2
    assert all("vision" in r["error"] for r in by_status["unsupported"])
    report = json.loads((run_dir / "devices" / "this-host" / "report.json").read_text())
    assert report["summary"]["total_scored"] == 2
    assert sorted(report["summary"]["skipped"]) == sorted(r["id"] for r in by_status["unsupported"])
    assert TINY_MM.exists()


def test_a_model_the_runtime_cannot_load_is_a_device_error_with_the_runtime_reason(tmp_path, local_inventory):
    data = bytearray(TINY_MM.read_bytes())
    data[300_000:320_000] = b"\xff" * 20_000  # header intact (ModelInfo reads it), a section broken
    bad = tmp_path / "corrupt.litertlm"
    bad.write_bytes(bytes(data))
    out = tmp_path / "runs"
    p = edgefarm(
        "run",
        "--devices",
        "local",
        "--inventory",
        str(local_inventory()),
        "--model",
        str(bad),
        "--limit",
        "2",
        "--out",
        str(out),
    )
    assert p.returncode == 4, p.stderr
    assert "could not be loaded" in p.stderr and "fix:" in p.stderr and "Traceback" not in p.stderr
    run_dir = _only_run_dir(out)
    dev = run_dir / "devices" / "this-host"
    outcome = json.loads((dev / "outcome.json").read_text())
    assert "Invalid flatbuffer" in outcome["error"] or "Failed to create engine" in outcome["error"]
    assert not (dev / "results.json").exists() and not list(dev.glob("*.stream.jsonl"))
    assert json.loads((run_dir / "report.json").read_text())["devices"][0]["error"]
