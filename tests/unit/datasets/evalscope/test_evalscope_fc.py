"""evalscope's function-calling file (the shape of its `custom_eval/text/fc/example.jsonl`: `messages`,
`tools`, `should_call_tool`, no `answer`) is refused with a clear message, never read as General-VQA."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.datasets import FORMATS, load_dataset
from orchestrator.errors import DatasetError

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


def test_detected_as_function_calling_and_refused(fc_file: Path) -> None:
    assert not FORMATS.get("general_vqa").detect(fc_file)
    assert FORMATS.get("general_fc").detect(fc_file) and FORMATS.get("general_fc").detect(fc_file.parent)
    with pytest.raises(DatasetError, match="General-FunctionCalling"):
        load_dataset(str(fc_file))


def test_cli_refuses_it_even_when_told_it_is_general_vqa(fc_file: Path) -> None:
    for extra in ((), ("--format", "general_vqa")):
        p = _check(str(fc_file), *extra)
        assert p.returncode == 2, (extra, p.stdout, p.stderr)
        assert "General-FunctionCalling" in p.stderr and "fix:" in p.stderr, p.stderr
        assert "Traceback" not in p.stderr
