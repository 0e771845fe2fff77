import numbers

import pytest

from android_runner.contract import SampleResult
from orchestrator.devices.types import DeviceInfo
from orchestrator.farm.types import DeviceOutcome
from orchestrator.report.combine import device_row, percentile, sample_rows


def test_percentile_matches_linear_interpolation():
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([10, 20, 30, 40, 50], 90) == pytest.approx(46.0)
    assert percentile([7], 90) == 7
    assert percentile([], 50) is None


def _r(i, status="ok", ttft=10.0, **kw):
    return SampleResult(
        id=i,
        status=status,
        ttft_ms=ttft,
        prefill_tps=100.0,
        decode_tps=50.0,
        init_ms=40.0,
        peak_rss_mb=80.0,
        backend="cpu",
        **kw,
    )


def test_device_row_uses_ok_samples_for_latency_and_counts_statuses():
    results = [
        _r("a", ttft=10),
        _r("b", ttft=30),
        _r("c", status="crash", ttft=999.0),
        _r("d", status="unsupported"),
    ]
    report = {
        "summary": {
            "total_scored": 3,
            "total_passed": 1,
            "pass_rate_pct": 33.33,
            "verdict": "✗ ISSUES DETECTED",
        },
        "by_modality": {"text": {"passed": 1, "total": 3, "avg_score": 0.3}},
    }
    row = device_row(
        DeviceInfo.from_dict({"name": "p", "kind": "adb", "manufacturer": "Google", "model": "Pixel 8"}),
        DeviceOutcome.from_dict({"wall_s": 1.234, "model_push": {"bytes_sent": 5}}),
        results,
        report,
    )
    assert row.hardware == "Google Pixel 8"
    assert row.status_counts == {"crash": 1, "ok": 2, "unsupported": 1}
    assert row.ttft_ms_p50 == 20.0  # the crashed sample's 999 ms is not a latency figure
    assert row.pass_rate_pct == 33.33 and row.scored == 3 and row.model_bytes_pushed == 5
    assert isinstance(row.peak_rss_mb, numbers.Number)


def test_sample_rows_put_devices_side_by_side():
    a = (
        [_r("x"), _r("y")],
        {"samples": [{"test_id": "x", "modality": "text", "passed": True, "score": 1.0}]},
    )
    b = ([_r("x", status="timeout")], None)
    rows = sample_rows({"pa": a, "pb": b})
    assert [r.id for r in rows] == ["x", "y"]
    assert rows[0].cells["pa"].passed is True and rows[0].cells["pb"].status == "timeout"
    assert "pb" not in rows[1].cells


def test_validity_counts_the_structured_and_tool_call_answers_that_parse_right_or_wrong():
    """docs/matrix.md: the matrix's validity, from the scorer's per-row details (scoring/edgemm._detail)."""
    from orchestrator.report.combine import format_valid
    from orchestrator.scoring.types import ScoredSample, ScoreReport, ScoreSummary

    def row(i, metric, **detail):
        return ScoredSample(id=i, modality="x", metric=metric, score=0.0, passed=False, detail=detail)

    samples = (
        row("s1", "structured", format_valid=True), row("s2", "structured", format_valid=False),
        row("t1", "tool_call", parsed_call={"name": "wrong_tool"}, expected_refusal=False),
        row("t2", "tool_call", parsed_call=None, expected_refusal=False),
        row("t3", "tool_call", parsed_call=None, expected_refusal=True),  # no call expected: not counted
        row("b1", "bleu1"),
    )  # fmt: skip
    score = ScoreReport("edgemmeval", ScoreSummary(6, 0, 0.0, 0.0), samples=samples)
    assert format_valid(score) == 0.5 and format_valid(None) is None
    assert format_valid(ScoreReport("edgemmeval", ScoreSummary(1, 0, 0.0, 0.0), samples=samples[-1:])) is None
    r = device_row(DeviceInfo.from_dict({"name": "p@gpu", "kind": "adb"}), DeviceOutcome.from_dict({}),
                   [_r(x.id) for x in samples], score)  # fmt: skip
    assert r.metrics["format_valid"] == 0.5
