"""Host side of the Python runner: staging runs nothing on the device, and the runtime's identity in the
runner's READY (or FATAL) line fills the run stamp (Staged.runner) in place."""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath

import pytest

from android_runner.contract import JobItem, JobPart, SampleResult
from orchestrator.devices.types import Exit, PushStats
from orchestrator.errors import DeviceError, ModelError
from orchestrator.models import ModelSummary
from orchestrator.runners.base import RunnerEvents, RunOptions
from orchestrator.runners.python_runner import PythonRunner

IDENTITY = {
    "runtime_version": "0.18.1",
    "runtime_lib": "/venv/site-packages/litert_lm/liblitert-lm.so",
    "runtime_sha256": "b" * 64,
}


class FakeBoard:
    """A device whose runner prints the given protocol lines and exits with `code`."""

    name = "board"
    workdir = PurePosixPath("/work/edgefarm")

    def __init__(self, lines: list[str] = (), code: int = 0) -> None:
        self.lines, self.code = lines, code
        self.commands: list[list[str]] = []

    def push(self, local, remote) -> PushStats:
        return PushStats(files=1)

    def pull(self, remote, local) -> None:
        raise DeviceError("no such file", fix="")

    def run(self, argv, timeout_s=None, on_line=None, cancel=None) -> Exit:
        self.commands.append(list(argv))
        for line in self.lines:
            on_line(line)
        return Exit(code=self.code)


def _stage(tmp_path: Path, board: FakeBoard):
    (tmp_path / "job.jsonl").write_text("")
    model = ModelSummary(tmp_path / "m.litertlm", 1, "a" * 64, False, False, None)
    runner = PythonRunner("python3")
    return runner, runner.stage(board, tmp_path, model, RunOptions(run_id="r1"))


def _line(kind: str, payload) -> str:
    return f"EDGEFARM {kind} {json.dumps(payload)}"


def test_staging_runs_no_probe_and_leaves_the_runtime_facts_to_the_runner(tmp_path: Path):
    board = FakeBoard()
    _, staged = _stage(tmp_path, board)
    assert board.commands == []
    assert list(staged.runner) == [
        "runner", "runner_sha256", "runtime", "runtime_version", "runtime_lib", "runtime_sha256", "python",
    ]  # fmt: skip
    assert staged.runner["runtime"] == "litert-lm-api" and len(staged.runner["runner_sha256"]) == 64
    assert [staged.runner[k] for k in IDENTITY] == ["", "", ""]


def test_ready_fills_the_same_stamp_in_place(tmp_path: Path):
    item = JobItem(id="a", turns=((JobPart("text", text="hi"),),))
    result = SampleResult(id="a", status="ok", output="x")
    board = FakeBoard(
        [
            _line("READY", {"init_ms": 12.0, "pending": 1, **IDENTITY}),
            _line("BEGIN", "a"),
            f"EDGEFARM RESULT {result.to_json()}",
            _line("DONE", {"samples": 1}),
        ]
    )
    runner, staged = _stage(tmp_path, board)
    stamp = staged.runner
    ready: list[float | None] = []
    got = runner.execute(board, staged, [item], RunOptions(run_id="r1"), RunnerEvents(ready=ready.append))
    assert [r.id for r in got] == ["a"] and ready == [12.0]
    assert staged.runner is stamp and {k: stamp[k] for k in IDENTITY} == IDENTITY
    assert stamp["runner"] == "python" and stamp["python"] == "python3"


def test_fatal_fills_the_stamp_too(tmp_path: Path):
    board = FakeBoard(
        [_line("FATAL", {"error": "RuntimeError: bad model", "detail": "", **IDENTITY})], code=65
    )
    runner, staged = _stage(tmp_path, board)
    item = JobItem(id="a", turns=((JobPart("text", text="hi"),),))
    with pytest.raises(ModelError, match="bad model"):
        runner.execute(board, staged, [item], RunOptions(run_id="r1"), RunnerEvents())
    assert {k: staged.runner[k] for k in IDENTITY} == IDENTITY


def test_the_files_staged_on_a_board_hold_every_module_the_runner_imports():
    """A board gets RUNNER_FILES only: a module one of them imports from the package (`from .x import`)
    and that is not in the list would fail there at start, never here."""
    import ast

    from orchestrator.runners.python_runner import PACKAGE_DIR, RUNNER_FILES

    needed = set()
    for name in RUNNER_FILES:
        tree = ast.parse((PACKAGE_DIR / name).read_text(encoding="utf-8"))
        needed |= {f"{node.module.split('.')[0]}.py" for node in ast.walk(tree)
                   if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module}  # fmt: skip
    assert needed and needed <= set(RUNNER_FILES), sorted(needed - set(RUNNER_FILES))
