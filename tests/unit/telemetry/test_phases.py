"""TTFT phases on the captured upstream image sample (Mark Durations) and on runner figures."""

from pathlib import Path

import pytest

from orchestrator.telemetry.benchmark_output import parse_benchmark_output
from orchestrator.telemetry.phases import prefill_ms, ttft_phases

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "litert_lm"


def test_captured_image_sample_ttft_is_vision_plus_text_prefill_plus_the_rest():
    bench = parse_benchmark_output("", (FIX / "success_image.stderr").read_text())
    phases = ttft_phases(bench.ttft_ms, bench.prefill[0].duration_ms, bench.mark_durations_ms)
    assert phases["vision_executor"] == pytest.approx(512.2513)
    assert phases["text_prefill"] == pytest.approx(1100.2 - 512.2513)
    assert phases["after_prefill"] == pytest.approx(bench.ttft_ms - 1100.2, abs=1e-3)  # TTFT 1.16 s
    assert sum(phases.values()) == pytest.approx(bench.ttft_ms, abs=1e-2)


def test_without_marks_the_encoders_stay_inside_prefill():
    assert ttft_phases(50.0, prefill_ms(32, 800.0)) == {"prefill": 40.0, "after_prefill": 10.0}
    assert ttft_phases(None, 40.0) is None and prefill_ms(0, 100.0) is None
