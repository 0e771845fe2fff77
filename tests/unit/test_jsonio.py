"""Bounded JSON from outside: too deep or too big is refused without ever recursing (issue 10)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from android_runner.contract import (
    JsonBoundError,
    SampleResult,
    json_depth_over,
    loads_bounded,
    parse_results,
    read_results,
)
from orchestrator.errors import ConfigError
from orchestrator.jsonio import DOCUMENT, Bounds, read_json

DEEP = "[" * 5000 + "]" * 5000  # json.loads raises RecursionError on this


def test_json_loads_itself_recurses_on_the_deep_text():
    with pytest.raises(RecursionError):  # what the bounded loader exists for
        json.loads("[" * (sys.getrecursionlimit() * 2) + "]" * (sys.getrecursionlimit() * 2))


def test_a_deep_text_is_refused_before_parsing_with_where_it_tripped():
    with pytest.raises(JsonBoundError) as e:
        loads_bounded(DEEP, 2**20, 64)
    assert e.value.kind == "depth" and e.value.offset == 64


def test_brackets_inside_strings_do_not_count_and_escapes_are_honoured():
    text = json.dumps({"a": "[[[[[[[[[[{{{{{{{{", "b": 'quote \\" [[[[', "c": [[1]]})
    assert json_depth_over(text, 3) is None
    assert loads_bounded(text, 2**20, 3)["c"] == [[1]]
    assert json_depth_over(text, 2) is not None


def test_a_text_over_the_size_bound_is_refused_unparsed():
    with pytest.raises(JsonBoundError) as e:
        loads_bounded('"' + "é" * 600 + '"', 1000, 64)  # 1202 UTF-8 bytes, 602 characters
    assert e.value.kind == "size"


def test_results_lines_too_deep_or_too_big_are_ignored_like_a_torn_line(tmp_path: Path):
    ok = SampleResult(id="a", status="ok", output="fine")
    big = SampleResult(id="b", status="ok", output="x" * (17 * 2**20)).to_json()
    deep = '{"id": "c", "status": "ok", "thermal_before": ' + DEEP + "}"
    lines = [ok.to_json(), deep, big, "[1, 2]", '"just a string"', '{"id": "d", "sta']
    assert list(parse_results(lines)) == [ok]
    p = tmp_path / "results.jsonl"
    p.write_text("\n".join(lines))
    assert list(read_results(str(p))) == [ok]


def test_read_json_names_file_and_line_of_the_deep_part(tmp_path: Path):
    p = tmp_path / "run.json"
    p.write_text('{\n  "run_id": "x",\n  "notes": ' + DEEP + "\n}\n")
    with pytest.raises(ConfigError) as e:
        read_json(p, DOCUMENT, error=ConfigError, fix="do this")
    assert e.value.where == f"{p}:3" and "nested deeper than 64" in e.value.what
    assert e.value.fix == "do this"


def test_read_json_refuses_a_file_over_the_size_bound_without_reading_it(tmp_path: Path):
    p = tmp_path / "big.json"
    p.write_text("[" + "1," * 600 + "1]")
    with pytest.raises(ConfigError) as e:
        read_json(p, Bounds(max_bytes=1000, max_depth=8), error=ConfigError, fix="f")
    assert "larger than" in e.value.what and e.value.where == str(p)


def test_read_json_reports_bad_json_with_its_line(tmp_path: Path):
    p = tmp_path / "x.json"
    p.write_text('{\n"a": 1,\n"b": }\n')
    with pytest.raises(ConfigError) as e:
        read_json(p, DOCUMENT, error=ConfigError, fix="f")
    assert e.value.where == f"{p}:3" and "not valid JSON" in e.value.what
