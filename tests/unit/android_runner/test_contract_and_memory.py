import json
from dataclasses import asdict
from pathlib import Path

from android_runner.contract import JobItem, JobPart, SampleResult, TurnFigures, read_results
from android_runner.memory import MemorySampler, parse_status
from android_runner.status import Status

STATUS = """Name:\tpython3
VmPeak:\t  500000 kB
VmHWM:\t  204800 kB
VmRSS:\t  102400 kB
RssAnon:\t   51200 kB
RssFile:\t   51200 kB
VmSwap:\t18446744073709551615 kB
"""


def test_parse_status_in_mb_and_ignores_overflowed_fields():
    got = parse_status(STATUS)
    assert got == {"VmHWM": 200.0, "VmRSS": 100.0, "RssAnon": 50.0, "RssFile": 50.0}


def test_job_item_round_trips():
    item = JobItem(
        id="IMG-001",
        turns=((JobPart("image", path="media/0000-1.png"), JobPart("text", text="Hi")),),
        tools=({"type": "function", "function": {"name": "f"}},),
        max_output_tokens=7,
    )
    assert JobItem.from_json(item.to_json()) == item


def test_results_reader_skips_a_torn_last_line(tmp_path: Path):
    r = SampleResult(id="a", status="ok", output="x", turns=(TurnFigures(prefill_tokens=3),))
    p = tmp_path / "results.jsonl"
    p.write_text(r.to_json() + "\n" + '{"id": "b", "stat')
    assert list(read_results(str(p))) == [r]
    assert list(read_results(str(tmp_path / "missing.jsonl"))) == []


def test_parse_status_reads_bytes_as_the_sampler_does_and_skips_odd_values():
    assert parse_status(STATUS.encode()) == parse_status(STATUS)
    odd = b"VmRSS:\t  2048 kB\nVmHWM:\t12ab kB\nRssAnon:\t-5 kB\nVmSwap:\t   1024"  # no final newline
    assert parse_status(odd) == {"VmRSS": 2.0, "VmSwap": 1.0}


def test_memory_sampler_keeps_peaks_since_reset():
    m = MemorySampler()
    m.reset()
    first = m.peaks()
    assert first["VmRSS"] > 0 and first["VmHWM"] >= first["VmRSS"]
    m._peaks["VmRSS"] = 1e9  # a peak seen earlier in the sample stays until the next reset
    assert m.peaks()["VmRSS"] == 1e9
    m.reset()
    assert m.peaks()["VmRSS"] < 1e9


def test_result_json_is_exactly_the_asdict_json():
    full = SampleResult(
        id="IMG-001",
        status=Status.OK,
        output='ünïcode "quoted"\n',
        error="",
        exit_code=None,
        init_ms=1.5,
        ttft_ms=2.25,
        prefill_tokens=10,
        prefill_tps=100.0,
        decode_tokens=5,
        decode_tps=50.5,
        infer_ms=3.0,
        wall_ms=4.0,
        peak_rss_mb=100.0,
        turns=(TurnFigures(3, 1.5, 2, 2.5, 9.0), TurnFigures(prefill_tokens=4)),
        backend="cpu",
        threads=2,
        cooldown_s=0.5,
        thermal_before={"max_temp_c": 40.0, "zones": 2, "cpu_mhz": 1800.0},
        thermal_after={"throttled": "0x0", "arm_mhz": 2400.0},
        power={"kind": "p_uw", "integral": 1.0, "n": 3, "dt_s": 0.1, "src": "hwmon"},
        ttft_phases_ms={"prefill": 1.0, "after_prefill": 0.5},
    )
    for r in (full, SampleResult(id="b", status=Status.TIMEOUT, exit_code=124)):
        assert r.to_json() == json.dumps(asdict(r), ensure_ascii=False, sort_keys=True)
        assert SampleResult.from_json(r.to_json()) == r


def test_fidelity_scores_round_trip_and_a_row_without_them_reads_as_not_asked():
    from android_runner.contract import FidelityScores, SampleResult

    f = FidelityScores(
        logp=(-1.5, -0.25), target_tokens=2, answer_ids=(3, 4, 5), answer_tokens=3, score_ms=1.0
    )
    row = SampleResult(id="a", status="ok", fidelity=f)
    assert SampleResult.from_json(row.to_json()) == row
    assert SampleResult.from_json(SampleResult(id="b", status="ok").to_json()).fidelity is None
