"""--sustain: the job's passes, every row's sustain_pass, and the per-pass curve with its throttle time
and steady-state fraction, on rows whose figures are set by hand (so each expected value is known)."""

from __future__ import annotations

from android_runner.contract import SampleResult
from orchestrator.datasets.types import Sample
from orchestrator.measure import base_id, describe, expand, measured_count, split, sustain_pass
from orchestrator.sustain import curve, html, markdown


def _samples(n: int) -> list[Sample]:
    return [
        Sample(id=f"T{i}", modality="text", task="qa", turns=(), reference="", references=())
        for i in range(n)
    ]


def test_expand_runs_the_sample_set_back_to_back_and_split_marks_each_pass():
    samples = _samples(2)
    job = expand(samples, sustain=3)
    assert [s.id for s in job] == ["T0", "T1", "T0@s2", "T1@s2", "T0@s3", "T1@s3"]
    assert measured_count(2, sustain=3) == 6 and sustain_pass("T1@s3") == 3 and sustain_pass("T1@r3") is None
    assert base_id("T0@s2") == "T0"
    rows = [SampleResult(id=s.id, status="ok") for s in job]
    first, repeats, warm = split(samples, rows)
    assert [(r.id, r.sustain_pass) for r in first] == [("T0", 1), ("T1", 1)]
    assert [r.sustain_pass for r in repeats] == [2, 2, 3, 3] and warm == []
    plain_first, plain_repeats, _ = split(
        samples, [SampleResult(id=s.id, status="ok") for s in expand(samples, 2)]
    )
    assert all(r.sustain_pass is None for r in plain_first + plain_repeats)  # --repeat rows carry no pass
    assert "back-to-back passes, no cooldown" in describe(2, 1, 0, 3)


def _row(i: str, k: int, tps: float, temp: float, status: int, mhz: float) -> SampleResult:
    return SampleResult(id=i, status="ok", sustain_pass=k, wall_ms=1000.0, decode_tps=tps, prefill_tps=tps * 10,
                        thermal_after={"max_temp_c": temp, "thermal_status": status, "cpu_mhz": mhz})  # fmt: skip


def test_curve_throttle_time_and_steady_state():
    # 2 samples per pass, 1 s each; pass 3 is the first with a lower clock, pass 4 the first with status 1
    figures = [(1, 20.0, 35.0, 0, 2900), (2, 19.0, 39.0, 0, 2900), (3, 15.0, 43.0, 0, 2000),
               (4, 12.0, 46.0, 1, 1400), (5, 12.0, 47.0, 2, 1400)]  # fmt: skip
    rows = [
        _row(f"T{j}@s{k}", k, tps + j, temp, st, mhz) for k, tps, temp, st, mhz in figures for j in (0, 1)
    ]
    c = curve(rows)
    assert [p.decode_tps for p in c.passes] == [20.5, 19.5, 15.5, 12.5, 12.5]
    assert [p.end_s for p in c.passes] == [2.0, 4.0, 6.0, 8.0, 10.0]
    assert c.first_throttle_s == 5.0 and "CPU clock 2000 MHz" in c.throttle_why  # pass 3's first sample
    assert c.steady_fraction == round(12.5 / 20.5, 3)
    assert c.passes[3].thermal_status == 1 and c.passes[4].cpu_mhz == 1400 and c.passes[2].max_temp_c == 43.0
    md = "\n".join(markdown({"pixel-8": c.to_json()}))
    assert "first throttle after 5.0 s" in md and "61% of the first pass" in md and "| pixel-8 | 5 |" in md
    # the per-pass figures by the catalogue's label, unit and format (Decode: {:.0f}; 12.5 -> 12)
    assert "| Time per sample (ms) | Prefill (tok/s) | Decode (tok/s) |" in md and "| pixel-8 | 4 | 8.0 | 1000 | 125 | 12 |" in md
    from orchestrator.report.charts import sustained
    from orchestrator.report.types.run_report import RunReport

    steady = {"passes": [dict(p, decode_tps=30.0) for p in c.to_json()["passes"]], "first_throttle_s": None}
    chart = sustained(RunReport(3, "r", {}, (), sustain={"pixel-8": c.to_json(), "pi-5": steady}))
    assert chart.count("class=\"legend\"") == 1 and ">pixel-8<" in chart and ">pi-5<" in chart  # one chart, both
    assert "Decode (% of pass 1)" in chart and "time under load (s)" in chart  # with axes: the catalogue's label
    assert "Time per sample (% of pass 1)" in chart and "Prefill (% of pass 1)" in chart  # a panel per figure
    assert ">100<" in chart and ">60<" in chart  # pi-5 at 100%, pixel-8 down to 61%: the y axis spans both
    page = html({"pixel-8": c.to_json()}, chart)
    assert "id='chart-sustain'" in page and "<li>pixel-8: first throttle after 5.0 s" in page
    assert "Time per sample: lower is better; Prefill, Decode: higher is better" in page  # the directions


def test_no_sustain_rows_no_curve_and_no_section():
    assert curve([SampleResult(id="T0", status="ok")]) is None
    assert markdown({}) == [] and html({}) == ""
    cool = curve([_row(f"T0@s{k}", k, 20.0, 30.0, 0, 2900) for k in (1, 2)])
    assert cool.first_throttle_s is None and cool.steady_fraction == 1.0


def test_the_ending_tells_an_os_stop_from_graceful_slowing_and_a_steady_run():
    from dataclasses import replace

    steady = [_row(f"T@s{k}", k, 20.0, 35.0, 0, 2900.0) for k in (1, 2, 3)]
    assert curve(steady).ending == "steady"
    slowed = [_row(f"T@s{k}", k, 20.0 - 4 * k, 35.0 + k, 0, 2900.0) for k in (1, 2, 3)]
    got = curve(slowed)
    assert got.ending == "graceful" and "slowed without a stop" in got.ending_why
    stop = replace(slowed[1], status="thermal_stop", decode_tps=None)
    got = curve([slowed[0], stop, slowed[2]])
    assert got.ending == "os_stop" and "pass 2 (sample T@s2" in got.ending_why and got.passes[1].thermal_stops == 1
