"""Paired comparisons and intervals in the report records (report/paired.py, report/intervals.py)."""

from __future__ import annotations

import json
import random

from android_runner.contract import SampleResult
from orchestrator.devices.types import DeviceInfo
from orchestrator.farm.run_json import RunJson
from orchestrator.farm.types import DeviceOutcome
from orchestrator.report.combine import build_report, device_row, sample_rows
from orchestrator.report.paired import flips_text, pair, ratio_text, speedup
from orchestrator.report.printers import PRINTERS
from orchestrator.report.types.sample_row import SampleCell

RUN = {"run_id": "r", "model": {"sha256": "a" * 64}, "dataset": {"sha256": "b" * 64}, "flags": {"threads": 4}}


def _cell(ms: float, passed: bool = True, strict: bool | None = None) -> SampleCell:
    return SampleCell("ok", passed, 1.0, ms / 2, 100.0, "x", wall_ms=ms, strict_passed=strict)


def test_a_known_factor_is_significant_and_identical_devices_are_not():
    rng = random.Random(2)
    base = {f"s{i}": rng.uniform(80, 120) for i in range(30)}
    a = {i: _cell(ms * rng.uniform(0.99, 1.01)) for i, ms in base.items()}
    slow = {i: _cell(2 * ms * rng.uniform(0.99, 1.01)) for i, ms in base.items()}
    twin = {i: _cell(ms * rng.uniform(0.99, 1.01)) for i, ms in base.items()}
    p = pair("a", "slow", a, slow)
    f = p.figure("wall_ms")
    assert f.significant and 1.95 < f.lo < f.ratio < f.hi < 2.05
    assert ratio_text(f, "a", "slow").endswith(": slow worse")
    s = speedup(p)
    assert 0.49 < s[0] < 0.51  # the slow device answers at half the baseline's speed
    same = pair("a", "twin", a, twin).figure("wall_ms")
    assert not same.significant and "no significant difference" in ratio_text(same, "a", "twin")


def test_flips_use_an_exact_mcnemar_test():
    a = {f"s{i}": _cell(10, passed=True) for i in range(20)}
    b8 = {i: _cell(10, passed=n >= 8) for n, i in enumerate(a)}  # 8 flips one way
    p = pair("a", "b", a, b8)
    assert (p.a_only, p.b_only, round(p.p_value, 6)) == (8, 0, round(2 / 256, 6))
    assert flips_text(p).endswith("a passes significantly more")
    b2 = {i: _cell(10, passed=n >= 2) for n, i in enumerate(a)}
    assert flips_text(pair("a", "b", a, b2)).endswith("no significant difference")


def _rows(ms: float, n: int = 12, cap: int | None = None):
    rng = random.Random(int(ms))
    return [SampleResult(id=f"s{i}", status="ok", output="yes", ttft_ms=ms * rng.uniform(0.9, 1.1),
                         wall_ms=2 * ms * rng.uniform(0.98, 1.02), decode_tps=20.0) for i in range(n)]  # fmt: skip


def test_rows_carry_intervals_as_fields_and_the_report_pairs_against_the_baseline():
    per = {"fast": (_rows(50), None), "slow": (_rows(100), None)}
    rows = [
        device_row(DeviceInfo.from_dict({"name": n}), DeviceOutcome(name=n, kind=""), res, rep)
        for n, (res, rep) in per.items()
    ]
    report = build_report(RunJson.from_dict(RUN), rows, sample_rows(per))
    fast = report.devices[0]
    lo, hi = fast.intervals["ttft_ms_p50"]
    assert lo <= fast.ttft_ms_p50 <= hi and fast.threads == "4"
    assert report.baseline == "fast" and report.paired[0].figure("wall_ms").significant
    data = json.loads(PRINTERS.get("json")(report))
    assert data["devices"][0]["intervals"]["ttft_ms_p50"] == [lo, hi]
    assert data["paired"][0]["b"] == "slow"
    md = PRINTERS.get("md")(report)
    assert "Speed-up vs fast" in md and "slow vs fast" in md and "slow worse" in md


def test_repeats_are_resampled_with_their_sample_so_the_interval_stays_honest():
    """--repeat: 5 near-identical repeats of 12 prompts whose latency differs a lot between prompts.
    Counting the repeats as independent would shrink the interval; whole samples are resampled."""
    rng = random.Random(4)
    base = {f"s{i}": rng.uniform(20, 200) for i in range(12)}
    first = [SampleResult(id=i, status="ok", output="y", ttft_ms=ms) for i, ms in base.items()]
    again = [SampleResult(id=i, status="ok", output="y", ttft_ms=ms + rng.gauss(0, 0.5)) for i, ms in base.items()
             for _ in range(4)]  # fmt: skip
    grouped = device_row(
        DeviceInfo.from_dict({"name": "p"}), DeviceOutcome(name="p", kind=""), first, None, repeats=again
    ).intervals["ttft_ms_p50"]
    as_if_independent = device_row(
        DeviceInfo.from_dict({"name": "p"}), DeviceOutcome(name="p", kind=""), first + again, None
    ).intervals["ttft_ms_p50"]
    assert grouped[1] - grouped[0] > 1.5 * (as_if_independent[1] - as_if_independent[0])


def test_cpu_sharing_is_stated():
    from orchestrator.report.facts import sharing_text

    run = {**RUN, "host_sharing": [{"host": "lab", "devices": ["cpu-a", "cpu-b"], "mode": "sequential"}]}
    report = build_report(
        RunJson.from_dict(run),
        [device_row(DeviceInfo.from_dict({"name": "cpu-a"}), DeviceOutcome(name="cpu-a", kind=""), [], None)],
    )
    assert sharing_text(report) == "cpu-a, cpu-b shared lab's CPU (sequential)"
    assert "CPU sharing: cpu-a, cpu-b shared lab's CPU (sequential)" in PRINTERS.get("md")(report)


def test_a_device_that_ran_nothing_is_neither_the_baseline_nor_paired():
    """A device refused or failed before its first sample has no rows: the first device that ran is the
    baseline, and the empty one gets no paired verdict; with no device that ran, no comparison at all."""
    per = {"failed": ([], None), "fast": (_rows(50), None), "slow": (_rows(100), None)}
    rows = [device_row(DeviceInfo.from_dict({"name": n}), DeviceOutcome(name=n, kind="", error="x" if not res else ""), res, rep)
            for n, (res, rep) in per.items()]  # fmt: skip
    report = build_report(RunJson.from_dict(RUN), rows, sample_rows(per))
    assert report.baseline == "fast" and [(p.a, p.b) for p in report.paired] == [("fast", "slow")]
    nothing = build_report(RunJson.from_dict(RUN), rows[:1], sample_rows({"failed": ([], None)}))
    assert nothing.baseline == "" and nothing.paired == ()
    md = PRINTERS.get("md")(nothing)
    assert "Speed-up vs" not in md and "Against the baseline" not in md
