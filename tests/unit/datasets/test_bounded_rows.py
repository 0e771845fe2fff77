"""A dataset row nested 5000 deep (or a TSV cell that would blow the Python parser) is a Problem naming
its file:line, never a RecursionError traceback (issue 10)."""

from __future__ import annotations

import json
from pathlib import Path

from orchestrator.datasets import load_dataset
from orchestrator.datasets.types import Problem

DEEP = "[" * 5000 + "]" * 5000


def _problems(ds) -> list[Problem]:
    return list(ds.problems)


def test_edgemmeval_row_nested_5000_deep_is_a_problem_at_its_line(tmp_path: Path):
    meta = tmp_path / "metadata.jsonl"
    good = {"test_id": "TXT-1", "modality": "text", "task": "qa", "prompt": "Hi?", "reference": "Hello"}
    meta.write_text(json.dumps(good) + "\n" + '{"test_id": "TXT-2", "modality": "text", "x": ' + DEEP + "}\n")
    ds = load_dataset(tmp_path, format="edgemmeval")
    assert [s.id for s in ds.samples] == ["TXT-1"]
    (p,) = _problems(ds)
    assert p.where == f"{meta}:2" and "nested deeper than 64 levels" in p.message


def test_evalscope_jsonl_row_nested_deep_is_a_problem_at_its_line(tmp_path: Path):
    f = tmp_path / "qa.jsonl"
    good = {"messages": [{"role": "user", "content": "Hi?"}], "answer": "Hello"}
    f.write_text(json.dumps(good) + "\n" + '{"messages": ' + DEEP + ', "answer": "x"}\n')
    ds = load_dataset(f, format="general_vqa")
    assert len(ds.samples) == 1
    (p,) = _problems(ds)
    assert p.where == f"{f}:2" and "nested deeper" in p.message


def test_evalscope_tsv_cells_that_would_blow_a_parser_are_problems(tmp_path: Path):
    f = tmp_path / "mcq.tsv"
    rows = [
        "question\toptions\tanswer",
        'Pick one\t["a", "b"]\tA',
        f"Deep JSON\t{DEEP}\tA",
        "Deep Python\t" + "1+" * 100_000 + "1\tA",  # ast.literal_eval: RecursionError
        "Huge unary\t" + "-" * 100_000 + "1\tA",  # ast.literal_eval: MemoryError
    ]
    f.write_text("\n".join(rows) + "\n")
    ds = load_dataset(f, format="general_vmcq")
    assert [s.id for s in ds.samples] == ["0"]
    by_line = {p.where: p.message for p in _problems(ds)}
    assert set(by_line) == {f"{f}:3", f"{f}:4", f"{f}:5"}
    assert "nested deeper" in by_line[f"{f}:3"]
