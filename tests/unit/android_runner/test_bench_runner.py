"""The Python runner's bench mode on the real runtime and the bundled tiny text model: every repetition
on a fresh engine (what one `litert_lm.Benchmark.run()` measures), and the CPU threads each ran with."""

from __future__ import annotations

from pathlib import Path

from android_runner.bench import BenchRunner
from android_runner.contract import JobItem
from android_runner.memory import MemorySampler
from android_runner.threads import thread_ids

MODEL = Path(__file__).resolve().parents[3] / "data" / "models" / "tiny-text.litertlm"


class _NoLog:
    """The runner's StderrLog, saying nothing (the runtime's log stays on this process's stderr)."""

    def offset(self) -> int:
        return 0

    def since(self, offset: int, max_chars: int = 800) -> str:
        return ""


def _item(rid: str, threads: int | None) -> JobItem:
    return JobItem(id=rid, turns=(), bench={"n_prompt": 16, "n_gen": 8, "n_depth": 0, "backend": "cpu",
                                            "threads": threads})  # fmt: skip


def test_each_repetition_runs_on_its_own_fresh_engine_and_names_the_threads_it_ran(tmp_path):
    runner = BenchRunner(str(MODEL), str(tmp_path), None, "python")
    loads: list[float] = []
    runner.on_load = lambda engine: loads.append(engine.init_ms)
    baseline = thread_ids()
    rows = []
    for rid, threads in (("a", 2), ("a@r2", 2), ("b", None)):
        rows.append(runner.run(_item(rid, threads), MemorySampler(), _NoLog()))
        assert runner.engine is None and thread_ids() == baseline  # its engine is gone with it
    assert [r.status for r in rows] == ["ok"] * 3, [r.error for r in rows]
    assert [r.engine_load for r in rows] == [1, 2, 3] and len(loads) == 3  # a load (and READY) per row
    assert [r.init_ms for r in rows] == [round(x, 3) for x in loads]  # each row its own engine's load
    assert [(r.threads, r.threads_ran, r.threads_from) for r in rows] == [
        (2, 2, "counted"), (2, 2, "counted"), (None, 4, "counted")]  # fmt: skip
    assert all(r.prefill_tokens == 16 and r.decode_tokens == 8 for r in rows)
    runner.close()
