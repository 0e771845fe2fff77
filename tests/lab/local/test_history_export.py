"""The history's exports on this host's real runs: an `edgefarm bench` and an `edgefarm run` each
record themselves; `history export` gives the bench's rows in llama-bench's fields (its sql, loaded
into sqlite3, and jsonl: the rows of bench.json) and the run's device as a row of LiteRT-LM's
benchmark table with the runtime's version and sha256 from the device's stamp."""

from __future__ import annotations

import json
import sqlite3

from orchestrator.bench.rows import FIELDS

from .conftest import TINY_TEXT, edgefarm, only_run_dir


def test_bench_rows_export_as_llama_bench_and_run_rows_as_litert_lm_table_rows(tmp_path, local_inventory):
    db, runs = tmp_path / "history.sqlite", tmp_path / "runs"
    p = edgefarm("bench", "--devices", "local", "--inventory", str(local_inventory()), "--out", str(runs / "b"),
                 "--model", str(TINY_TEXT), "-p", "16", "-n", "4", "-r", "2", "--db", str(db))  # fmt: skip
    assert p.returncode == 0 and f"history: recorded in {db}" in p.stderr, p.stderr[-3000:]
    bench_dir = only_run_dir(runs / "b")
    p = edgefarm("run", "--devices", "local", "--inventory", str(local_inventory()), "--out", str(runs / "r"),
                 "--model", str(TINY_TEXT), "--limit", "2", "--modality", "text", "--db", str(db))  # fmt: skip
    assert p.returncode in (0, 1) and f"history: recorded in {db}" in p.stderr, p.stderr[-3000:]
    run_dir = only_run_dir(runs / "r")

    bench_rows = json.loads((bench_dir / "bench.json").read_text())["rows"]
    p = edgefarm("history", "export", "--format", "llama-jsonl", "--db", str(db))
    assert p.returncode == 0, p.stderr[-3000:]
    assert [json.loads(x) for x in p.stdout.splitlines()] == bench_rows
    assert {r["test"] for r in bench_rows} == {"pp16", "tg4"}
    p = edgefarm("history", "export", "--format", "llama-sql", "--db", str(db))
    with sqlite3.connect(":memory:") as c:
        c.executescript(p.stdout)
        cols = [r[1] for r in c.execute("PRAGMA table_info(edgefarm_bench)")]
        got = c.execute("SELECT test, n_prompt, n_gen, avg_ts FROM edgefarm_bench ORDER BY test").fetchall()
    assert cols == list(FIELDS) and [g[:3] for g in got] == [("pp16", 16, 0), ("tg4", 0, 4)]
    assert all(g[3] and g[3] > 0 for g in got)

    p = edgefarm("history", "export", "--format", "litert-jsonl", "--db", str(db))
    (row,) = [json.loads(x) for x in p.stdout.splitlines()]  # the run's one device; the bench is not a run
    stamp = json.loads((run_dir / "devices" / "this-host" / "outcome.json").read_text())["runner"]
    assert row["model"] == TINY_TEXT.name and row["device"] == "this-host" and row["backend"] == "CPU"
    assert (
        row["runtime_version"] == stamp["runtime_version"]
        and row["runtime_sha256"] == stamp["runtime_sha256"]
    )
    assert row["prefill_tokens_per_sec"] > 0 and row["decode_tokens_per_sec"] > 0
    assert 0 < row["time_to_first_token_sec"] < 60 and row["cpu_memory_mb"] > 0
    assert row["context_size"] == stamp["settings"]["max_num_tokens"] and row["run_id"] == run_dir.name
    assert row["model_size_mb"] == round(TINY_TEXT.stat().st_size / 2**20, 1)
    md = edgefarm("history", "export", "--format", "litert-md", "--db", str(db)).stdout.splitlines()
    assert md[0].startswith("| Model | Device | Backend | Prefill (tokens/sec) | Decode (tokens/sec) | ")
    assert md[2].startswith(f"| {TINY_TEXT.name} | this-host | CPU | ")

    again = edgefarm("history", "import", str(runs / "b"), str(runs / "r"), "--db", str(db))
    assert again.returncode == 0 and again.stdout.startswith("2 unchanged"), again.stdout + again.stderr
