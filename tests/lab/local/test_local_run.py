"""The spine, for real: `edgefarm run` on this host with the litert_lm runtime and the tiny model."""

from __future__ import annotations

import json
import math
import struct
import wave
from pathlib import Path

from PIL import Image

from .conftest import TINY_MM, TINY_TEXT, device_json, edgefarm, results, run_json

MODALITY_BY_MEDIA = {None: "text", "image": "image", "audio": "audio"}
EVERY_MODALITY = {"image", "audio", "text", "multi_turn", "combination", "structured_output", "tool_call"}
# what every devices/<name>/ folder of a run holds
PER_DEVICE = ("device.json", "outcome.json", "results.jsonl", "results.json", "report.json", "job/job.jsonl")


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


def test_canned_prompts_are_answered_exactly_with_real_figures(tmp_path, canned, run_here):
    ds = canned_dataset(tmp_path / "canned", canned)
    p, run_dir = run_here("--dataset", str(ds))
    assert p.returncode == 0, p.stderr
    by_id = {r["id"]: r for r in results(run_dir)}
    assert len(by_id) == len(canned)
    for i, c in enumerate(canned, 1):
        r = by_id[f"CAN-{i:03d}"]
        assert r["status"] == "ok", r
        assert r["output"] == c["answer"], (c, r["output"])
        assert r["init_ms"] > 0 and r["ttft_ms"] > 0 and r["wall_ms"] > 0
        assert r["prefill_tokens"] > 0 and r["prefill_tps"] > 0
        assert r["decode_tokens"] > 0 and r["decode_tps"] > 0
        assert r["peak_rss_mb"] > 0 and r["peak_hwm_mb"] >= r["peak_rss_mb"] * 0.5
        assert r["peak_file_mb"] is not None and r["peak_anon_mb"] > 0
    report = device_json(run_dir, "report.json")
    assert report["summary"]["total_scored"] == len(canned)
    assert report["summary"]["pass_rate_pct"] == 100.0
    assert report["summary"]["verdict"] == "✓ INFERENCE WORKING"
    assert "this-host" in p.stdout + p.stderr  # the comparison table names the device


def test_bundled_slice_of_every_modality_writes_the_whole_run_directory(run_here):
    p, run_dir = run_here("--per-modality", "2", "--max-output-tokens", "16", devices="all")
    assert p.returncode == 0, p.stderr
    for name in ("run.json", "report.json", "report.md", "report.html"):
        assert (run_dir / name).is_file(), name
    run = run_json(run_dir, "run.json")
    assert len(run["model"]["sha256"]) == 64 and len(run["dataset"]["sha256"]) == 64
    assert run["versions"]["litert-lm-api"] == "0.18.1"
    dev = run_dir / "devices" / "this-host"
    for name in PER_DEVICE:
        assert (dev / name).is_file(), name
    rows = results(run_dir)
    modalities = {s["modality"] for s in device_json(run_dir, "report.json")["samples"]}
    assert modalities == EVERY_MODALITY
    assert len(rows) == 14
    ok = [r for r in rows if r["status"] == "ok"]
    assert len(ok) >= 12, [(r["id"], r["status"], r["error"]) for r in rows if r["status"] != "ok"]
    for r in ok:
        assert r["ttft_ms"] > 0 and r["decode_tps"] > 0 and r["peak_rss_mb"] > 0
        assert r["decode_tokens"] <= 16 * max(1, len(r["turns"]))
    row = run_json(run_dir)["devices"][0]
    assert row["device"] == "this-host" and row["samples"] == 14
    assert row["ttft_ms_p50"] > 0 and row["decode_tps_p50"] > 0 and row["peak_rss_mb"] > 0
    md = (run_dir / "report.md").read_text()
    assert "| this-host |" in md and "TTFT p50" in md
    # the run builds its report from the rows it has just written; `edgefarm report` reads them back
    again = edgefarm("report", str(run_dir), "--format", "json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout) == run_json(run_dir)


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


def test_text_only_model_reports_media_samples_unsupported(run_here):
    flags = ("--modality", "image", "--modality", "text", "--per-modality", "2", "--max-output-tokens", "8")
    p, run_dir = run_here("--model", str(TINY_TEXT), *flags)
    assert p.returncode == 0, p.stderr
    by_status = {}
    for r in results(run_dir):
        by_status.setdefault(r["status"], []).append(r)
    assert len(by_status["unsupported"]) == 2 and len(by_status["ok"]) == 2
    assert all("vision" in r["error"] for r in by_status["unsupported"])
    report = device_json(run_dir, "report.json")
    assert report["summary"]["total_scored"] == 2
    assert sorted(report["summary"]["skipped"]) == sorted(r["id"] for r in by_status["unsupported"])
    assert TINY_MM.exists()


def test_a_model_the_runtime_cannot_load_is_a_device_error_with_the_runtime_reason(tmp_path, run_here):
    data = bytearray(TINY_MM.read_bytes())
    data[300_000:320_000] = b"\xff" * 20_000  # header intact (ModelInfo reads it), a section broken
    bad = tmp_path / "corrupt.litertlm"
    bad.write_bytes(bytes(data))
    p, run_dir = run_here("--model", str(bad), "--limit", "2")
    assert p.returncode == 4, p.stderr
    assert "could not be loaded" in p.stderr and "fix:" in p.stderr and "Traceback" not in p.stderr
    dev = run_dir / "devices" / "this-host"
    outcome = device_json(run_dir, "outcome.json")
    assert "Invalid flatbuffer" in outcome["error"] or "Failed to create engine" in outcome["error"]
    assert not (dev / "results.json").exists() and not list(dev.glob("*.stream.jsonl"))
    assert run_json(run_dir)["devices"][0]["error"]
