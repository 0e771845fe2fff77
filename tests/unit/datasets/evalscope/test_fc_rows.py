"""evalscope's function-calling file (the shape of its `custom_eval/text/fc/example.jsonl`: `messages`,
`tools`, `should_call_tool`, no `answer`) is read as General-FunctionCalling, never as General-VQA."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.datasets import FORMATS, load_dataset

REPO = Path(__file__).resolve().parents[4]
ADD = {"type": "function", "function": {"name": "add", "description": "将两个数字相加", "parameters": {
    "type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["a", "b"], "additionalProperties": False}}}  # fmt: skip
ROWS = [
    {"messages": [{"role": "system", "content": "你是助手"}, {"role": "user", "content": "请把 2 和 3 相加"}],
     "tools": [ADD], "should_call_tool": True},
    {"messages": [{"role": "user", "content": "今天天气不错，我们聊聊天"}], "tools": [ADD], "should_call_tool": False},
]  # fmt: skip


@pytest.fixture()
def fc_file(tmp_path: Path) -> Path:
    path = tmp_path / "fc" / "example.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS), encoding="utf-8")
    return path


def _check(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "orchestrator", "dataset", "check", *args], capture_output=True,
                          text=True, timeout=120, cwd=REPO, check=False)  # fmt: skip


def test_detected_and_read_as_function_calling(fc_file: Path) -> None:
    assert not FORMATS.get("general_vqa").detect(fc_file)
    assert FORMATS.get("general_fc").detect(fc_file) and FORMATS.get("general_fc").detect(fc_file.parent)
    ds = load_dataset(str(fc_file))
    assert ds.format == "general_fc" and not ds.problems
    first, second = ds.samples
    assert first.system == "你是助手" and first.turns[0].parts[0].text == "请把 2 和 3 相加"
    assert first.tools == (ADD,) and first.reference == "should_call_tool: true"
    assert second.system is None and second.reference == "should_call_tool: false"


def test_tsv_cells_and_bad_rows_are_problems(tmp_path: Path) -> None:
    path = tmp_path / "fc.tsv"
    bad_tools = json.dumps([{"type": "function", "function": {"description": "no name"}}])
    path.write_text(
        "messages\ttools\tshould_call_tool\n"
        + "\t".join([json.dumps(ROWS[0]["messages"], ensure_ascii=False), json.dumps([ADD]), "true"]) + "\n"
        + "\t".join([json.dumps(ROWS[1]["messages"], ensure_ascii=False), bad_tools, "false"]) + "\n"
        + "\t".join([json.dumps(ROWS[1]["messages"], ensure_ascii=False), json.dumps([ADD]), "maybe"]) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    ds = FORMATS.get("general_fc").load(path, None)
    assert [s.reference for s in ds.samples] == ["should_call_tool: true"]
    assert {p.field for p in ds.problems} == {"tools[0]", "should_call_tool"}


def test_cli_reads_it_and_refuses_it_as_general_vqa(fc_file: Path) -> None:
    ok = _check(str(fc_file))
    assert ok.returncode == 0 and "general_fc" in ok.stdout, ok.stdout + ok.stderr
    p = _check(str(fc_file), "--format", "general_vqa")
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "General-FunctionCalling" in p.stderr and "--format general_fc" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr
