"""The host's reading of the native runner's lines: every device-supplied field bounded and checked, a
hostile value is that sample's error row (or a field left unmeasured), never an exception (issue 24)."""

from __future__ import annotations

import json

import pytest

from android_runner.answer_text import clean_answer, decode_answer
from android_runner.contract import OUTPUT_MAX_BYTES, RESULT_LINE_MAX_DEPTH
from orchestrator.runners.android_driver import _json_record
from orchestrator.runners.android_native import line_row, parse_line, with_snapshots
from orchestrator.runners.base import RunOptions

OPTS = RunOptions(run_id="t")
REPLY = json.dumps({"role": "assistant", "content": [{"type": "text", "text": "hi"}]})


def row(**fields):
    line = {"n": 1, "status": "ok", "error": "", "response": REPLY, **fields}
    parsed = parse_line(json.dumps(line))
    return with_snapshots(line_row(parsed, "S-1", OPTS), parsed, OPTS, {})


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_a_plain_line_reads_with_the_native_fields():
    r = row(peak_method="hwm_reset", mem_sample_ms=20, invalid_utf8_bytes=3, runtime_override="sha256 ab")
    assert (r.status, r.output, r.runner, r.peak_method, r.mem_sample_ms) == (
        "ok",
        "hi",
        "native",
        "hwm_reset",
        20.0,
    )
    assert (r.invalid_utf8_bytes, r.runtime_override) == (3, "sha256 ab")


def test_a_reply_nested_5000_deep_is_that_samples_error_row():
    reply = (
        '{"role":"assistant","content":[],"tool_calls":[{"function":{"name":"f","arguments":'
        + deep(5000)
        + "}}]}"
    )
    r = row(response=reply)
    assert r.status == "error" and "nested deeper than" in r.error and r.output == ""


def test_a_tool_call_whose_arguments_string_is_nested_deep_is_an_error_row():
    reply = json.dumps(
        {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": deep(100000)}}]}
    )
    r = row(response=reply)
    assert r.status == "error" and "not a reply" in r.error


@pytest.mark.parametrize("reply", ["not json", "[1,2]", '"a string"', "{", "null"])
def test_a_reply_that_is_not_a_reply_is_an_error_row(reply):
    r = row(response=reply)
    assert r.status == "error" and r.output == ""


def test_a_whole_line_nested_deep_or_huge_is_not_a_line():
    assert parse_line('{"n":1,"x":' + deep(RESULT_LINE_MAX_DEPTH + 5) + "}") is None
    assert parse_line('{"n":1,"x":"' + "a" * (17 * 2**20) + '"}') is None
    assert parse_line('{"n":"1"}') is None and parse_line("garbage") is None


@pytest.mark.parametrize(
    "field,value",
    [("exit_code", "x"), ("init_ms", "fast"), ("ttft_ms", [1]), ("wall_ms", float("nan")), ("infer_ms", True),
     ("peak_rss_kb", "9"), ("peak_swap_kb", {"a": 1}), ("peak_hwm_kb", -4), ("turns", "many"),
     ("turns", [{"prefill_tokens": "3", "decode_tps": "x"}, 7]), ("power", {"integral": "x", "n": "y"}),
     ("power", [1, 2]), ("invalid_utf8_bytes", "lots"), ("output_truncated_bytes", -1), ("mem_sample_ms", "20"),
     ("peak_method", "made-up"), ("runtime_override", 42), ("error", {"x": 1})],
)  # fmt: skip
def test_each_device_supplied_field_of_the_wrong_type_leaves_the_row_readable(field, value):
    r = row(**{field: value})
    assert r.status in ("ok", "error") and r.id == "S-1"
    assert r.peak_method in ("", "hwm_reset", "sampled")
    json.dumps(r.__dict__, default=str)  # the row is writable


def test_a_died_line_with_a_text_exit_code_is_a_row():
    r = line_row({"n": 1, "status": "died", "exit_code": "137"}, "S-1", OPTS)
    assert r.status == "error" and r.id == "S-1"


def test_sampled_peaks_leave_the_process_wide_vmhwm_out():
    r = row(peak_method="sampled", peak_rss_kb=100 * 1024, peak_hwm_kb=900 * 1024)
    assert r.peak_rss_mb == 100.0 and r.peak_hwm_mb is None
    r = row(peak_method="hwm_reset", peak_rss_kb=100 * 1024, peak_hwm_kb=120 * 1024)
    assert r.peak_rss_mb == 120.0


def test_a_reply_whose_answer_was_cut_keeps_its_text_and_the_mark_a_cut_reply_is_an_error_row():
    whole = '{"role":"assistant","content":[{"type":"text","text":"' + "caf\\u00e9 " * 10 + '"}]}'
    r = row(response=whole, output_truncated_bytes=12345)  # the runner cut the answer, not the reply
    assert r.status == "ok" and r.output == "café " * 10 and r.output_truncated_bytes == 12345
    # another shape, cut at the cap: not a reply
    cut = '{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":{"a":"xx'
    r = row(response=cut, output_truncated_bytes=12345)
    assert r.status == "error" and "cut at its cap and is not plain text" in r.error and r.output == ""


def test_ready_and_fatal_payloads_are_parsed_under_bounds():
    assert _json_record('{"init_ms": 5}') == {"init_ms": 5}
    assert _json_record('{"init_ms":' + deep(10000) + "}") == {}
    assert _json_record("[1]") == {} and _json_record("nope") == {}


def test_the_shared_answer_rule_matches_pythons_replace_and_caps_on_a_character_boundary():
    raw = b"ok \xff then \xe2\x82 cut, \xed\xa0\x80 surrogate, \xc3\xa9 fine"
    text, invalid = decode_answer(raw)
    assert text == raw.decode("utf-8", "replace") and invalid == 6
    kept, invalid, dropped = clean_answer("é" * OUTPUT_MAX_BYTES)
    assert len(kept.encode()) <= OUTPUT_MAX_BYTES and dropped == 2 * OUTPUT_MAX_BYTES - len(kept.encode())
    assert invalid == 0 and clean_answer("short") == ("short", 0, 0)


REAL = __import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures" / "real"


def test_a_gpu_that_fell_back_per_the_runner_log_is_an_error_row_that_does_not_say_gpu():
    """A real capture's head (lm1448: the GPU accelerator could not be loaded) as the runner's log."""
    from dataclasses import replace

    from orchestrator.runners.android_native import backend_lines

    log = backend_lines((REAL / "lm1448_emulator_gpu_head.log").read_text("utf-8"))
    line = parse_line(json.dumps({"n": 1, "status": "ok", "error": "", "response": REPLY}))
    gpu = replace(OPTS, backend="gpu")
    r = with_snapshots(line_row(line, "S-1", gpu), line, gpu, {}, log)
    assert r.status == "error" and r.backend == "cpu" and r.backend_requested == "gpu"
    assert "GPU accelerator could not be" in r.error
    ok = with_snapshots(
        line_row(line, "S-1", OPTS), line, OPTS, {}, log
    )  # cpu asked: the same log is no fallback
    assert ok.status == "ok" and ok.backend == "cpu"
