"""evalscope's General-FunctionCalling example shape through the real CLI on this host: the tools reach
the runtime, and report.json carries evalscope's four metrics, consistent with the rows' outputs."""

from __future__ import annotations

import json
from pathlib import Path

from orchestrator.scoring.evalscope_fc import aggregate, sample_values

from .conftest import device_json, results

ADD = {"type": "function", "function": {"name": "add", "description": "将两个数字相加", "parameters": {
    "type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["a", "b"], "additionalProperties": False}}}  # fmt: skip
TEMP = {"type": "function", "function": {"name": "convert_temperature", "description": "将摄氏度转换为华氏度",
        "parameters": {"type": "object", "properties": {"celsius": {"type": "number"}}, "required": ["celsius"],
                       "additionalProperties": False}}}  # fmt: skip
ROWS = [  # the three rows of evalscope's custom_eval/text/fc/example.jsonl, in its shape
    {"messages": [{"role": "system", "content": "你是助手"}, {"role": "user", "content": "请把 2 和 3 相加"}],
     "tools": [ADD], "should_call_tool": True},
    {"messages": [{"role": "system", "content": "你是助手"}, {"role": "user", "content": "今天天气不错，我们聊聊天"}],
     "tools": [ADD], "should_call_tool": False},
    {"messages": [{"role": "system", "content": "你是助手"}, {"role": "user", "content": "把 37 摄氏度转换为华氏度"}],
     "tools": [TEMP], "should_call_tool": True},
]  # fmt: skip


def test_function_calling_example_runs_and_scores_like_evalscope(run_here, tmp_path: Path):
    data = tmp_path / "fc" / "example.jsonl"
    data.parent.mkdir()
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS), encoding="utf-8")
    ran = run_here("--dataset", str(data))
    assert ran.proc.returncode == 0, ran.proc.stderr[-3000:]
    assert "General-FunctionCalling" in ran.proc.stdout and "tool_call_f1" in ran.proc.stdout
    job = [json.loads(x) for x in (ran.run_dir / "devices/this-host/job/job.jsonl").read_text().splitlines()]
    assert [j["tools"] for j in job] == [r["tools"] for r in ROWS]  # the tools went to the runtime
    rows = {r["id"]: r for r in results(ran.run_dir)}
    report = device_json(ran.run_dir, "report.json")
    assert report["format"] == "general_fc" and report["main_metric"] == "tool_call_f1"
    values = [sample_values(r["should_call_tool"], rows[str(i)]["output"], [*r["tools"]])[0]
              for i, r in enumerate(ROWS)]  # fmt: skip
    want = aggregate(values)
    got = {m["metric"]: m for m in report["metrics"]}
    assert set(got) == set(want)
    for metric, value in want.items():
        assert got[metric]["num"] == 3 and abs(got[metric]["score"] - value) < 1e-4
