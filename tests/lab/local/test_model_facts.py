"""The model's own facts (ai-edge-litert's schema over the TFLite sections) in run.json, and the
predicted memory floor of each bundled model against the peak measured running it on this host: a
floor must never be above a measured peak. docs/model-facts.md quotes both figures."""

from __future__ import annotations

import pytest

from .conftest import TINY_MM, TINY_TEXT, results, run_json


@pytest.mark.parametrize("model", [TINY_MM, TINY_TEXT], ids=["tiny-mm", "tiny-text"])
def test_predicted_floor_is_below_the_measured_peak(run_here, model):
    ran = run_here("--model", str(model), "--modality", "text", "--limit", "3")
    assert ran.proc.returncode == 0, ran.proc.stderr[-3000:]
    facts = run_json(ran.run_dir, "run.json")["model"]["facts"]
    by_type = {s["model_type"]: s for s in facts["sections"]}
    decoder = by_type["tf_lite_prefill_decode"]
    assert decoder["quantization"].startswith("INT8 per-channel")  # the build's dynamic_wi8_afp32 recipe
    assert (
        facts["kv_cache_tokens"] == 2048 and facts["kv_cache_mb"] == 1.0
    )  # 2 layers x K,V x 2 heads x 16 x f32
    if model == TINY_MM:
        assert facts["vision_input"] == [1, 32, 32, 3] and facts["audio_input"] == [1, 64, 16]
    else:
        assert facts["vision_input"] is None and "tf_lite_vision_encoder" not in by_type
    peaks = [r["peak_rss_mb"] for r in results(ran.run_dir) if r["status"] == "ok"]
    assert peaks and facts["predicted_floor_mb"] < min(peaks)
    # the report's stamp shows the floor beside the device's measured peak
    line = next(ln for ln in (ran.run_dir / "report.md").read_text().splitlines() if "memory floor" in ln)
    assert f"{facts['predicted_floor_mb']} MB predicted" in line and f"this-host {max(peaks):.0f} MB" in line
    print(f"\n{model.name}: predicted floor {facts['predicted_floor_mb']} MB, measured peak {max(peaks)} MB")


def test_image_samples_ttft_is_split_into_prefill_and_after(run_here):
    """LiteRT-LM 0.18.1's APIs report no encoder marks: the vision encoder stays inside `prefill`
    (only the upstream binary's Mark Durations split it out: tests/unit/telemetry/test_phases.py)."""
    ran = run_here("--modality", "image", "--limit", "2")
    assert ran.proc.returncode == 0, ran.proc.stderr[-3000:]
    ok = [r for r in results(ran.run_dir) if r["status"] == "ok"]
    assert ok
    for r in ok:
        phases = r["ttft_phases_ms"]
        assert set(phases) == {"prefill", "after_prefill"}, phases
        assert sum(phases.values()) == pytest.approx(r["ttft_ms"], abs=0.01 + 0.02 * r["ttft_ms"])
