"""The upstream binary's output -> figures and failure kinds, on verbatim-style captures."""

from pathlib import Path

import pytest

from orchestrator.telemetry.benchmark_output import duration_ms, parse_benchmark_output

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "litert_lm"


def parse(name: str):
    return parse_benchmark_output((FIX / f"{name}.stdout").read_text(), (FIX / f"{name}.stderr").read_text())


@pytest.mark.parametrize(
    "text,ms", [("819.9514ms", 819.9514), ("8.7038005s", 8703.8005), ("11.2us", 0.0112), ("0.92 s", 920.0)]
)
def test_duration_units(text, ms):
    assert duration_ms(text) == pytest.approx(ms)


def test_success_with_glog_prefix_on_stderr():
    r = parse("success_cpu")
    assert r.answer == "The capital of France is Paris."
    assert r.has_benchmark and r.failure == "" and r.warnings == ()
    assert [name for name, _ in r.init_phases_ms] == [
        "Executor initialization",
        "Tokenizer initialization",
        "Model assets loading",
    ]
    assert r.init_total_ms == pytest.approx(2054.6514)  # the `Total init time` line
    assert r.ttft_ms == pytest.approx(920.0)
    assert r.prefill[0].tokens == 25 and r.prefill[0].tps == pytest.approx(122.19)
    assert r.prefill[0].duration_ms == pytest.approx(204.6)
    assert r.decode[0].tokens == 128 and r.decode[0].duration_ms == pytest.approx(8703.8005)
    assert r.peak_ram_mb == 1834.25 and r.peak_private_mb == 1502.5
    assert r.infer_ms == pytest.approx(204.6 + 8703.8005)


def test_gpu_fallback_is_a_warning_and_init_total_phase_is_the_total():
    r = parse("gpu_fallback")
    assert r.answer == "A red bicycle leaning against a brick wall."
    assert r.failure == "" and "gpu_unavailable" in r.warnings
    assert r.init_total_ms == pytest.approx(2862.85)
    assert ("Init Total", 2862.85) not in r.init_phases_ms and len(r.init_phases_ms) == 3
    assert r.decode[0].tps == pytest.approx(15.94)  # `(Total: 1)` spelling


@pytest.mark.parametrize(
    "name,kind",
    [
        ("crash_opencl", "opencl_crash"),
        ("link_error", "link_error"),
        ("npu_missing", "npu_dispatch_missing"),
        ("truncated_model", "truncated_model"),
        ("oom", "oom"),
    ],
)
def test_failures_without_benchmark_are_classified(name, kind):
    r = parse(name)
    assert not r.has_benchmark
    assert r.failure == kind
    assert r.detail  # the line that told us
    assert r.ttft_ms is None and r.prefill == ()


def test_failed_before_generating_reports_no_ttft():
    r = parse("no_prefill")
    assert r.failure == "no_benchmark" and not r.has_benchmark
    assert r.ttft_ms is None
    assert r.init_total_ms == pytest.approx(924.5)  # summed phases when no total is printed


def test_multi_turn_sums_tokens_over_turns():
    r = parse("multi_turn")
    assert r.answer.splitlines() == ["My name is Ada, nice to meet you.", "You told me your name is Sam."]
    assert [t.turn for t in r.prefill] == [1, 2]
    assert r.prefill_tokens == 32 and r.decode_tokens == 19
    assert r.decode[1].duration_ms == pytest.approx(601.0)
    assert r.decode[1].tps == pytest.approx(14.98)
    assert r.init_total_ms == pytest.approx(411.0)


def test_num_iterations_reads_the_aggregated_block():
    r = parse("num_iterations")
    assert r.answer == "Paris."
    assert r.iterations == 3
    assert r.ttft_ms == pytest.approx(850.0)
    assert r.prefill[0].tps == pytest.approx(131.58)
    assert r.peak_ram_mb == 1500.0


def test_empty_output_is_no_benchmark():
    r = parse_benchmark_output("", "")
    assert r.failure == "no_benchmark" and r.answer == ""
