from pathlib import Path

from android_runner.contract import JobItem, JobPart, SampleResult, TurnFigures, read_results
from android_runner.memory import parse_status

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
