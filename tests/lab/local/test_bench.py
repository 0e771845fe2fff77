"""`edgefarm bench` on this host: the real CLI, the real litert_lm runtime, the bundled tiny text model
(context 2048). Exact token counts the runtime itself reports, a fresh engine per repetition, the
thread count the runtime ran with, the outputs, the refusals, and --resume."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from orchestrator.devices.local import LocalDevice
from orchestrator.devices.lock import held

from .conftest import REPO, TINY_TEXT, edgefarm, only_run_dir


def _bench(tmp_path: Path, local_inventory, *flags: str):
    out = tmp_path / "runs"
    p = edgefarm("bench", "--devices", "local", "--inventory", str(local_inventory()), "--out", str(out),
                 "--model", str(TINY_TEXT), *flags)  # fmt: skip
    return p, only_run_dir(out)


def _rows(run_dir: Path, name: str) -> list[dict]:
    path = run_dir / "devices" / "this-host" / name
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def test_every_repetition_processes_exactly_the_tokens_asked(tmp_path, local_inventory):
    p, run_dir = _bench(tmp_path, local_inventory, "-p", "16,40", "-n", "8", "-d", "0,100", "-r", "2",
                        "-o", "json")  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    rows = json.loads(p.stdout)
    assert [(r["test"], r["n_depth"]) for r in rows] == [
        ("pp16", 0),
        ("tg8", 16),
        ("pp40", 0),
        ("tg8", 40),
        ("pp16", 100),
        ("tg8", 116),
        ("pp40", 100),
        ("tg8", 140),
    ]
    assert all(r["repetitions"] == 2 and r["errors"] == 0 and len(r["samples_ts"]) == 2 for r in rows)
    assert all(r["avg_ts"] > 0 and r["ci95_hi_ts"] >= r["avg_ts"] for r in rows)
    measured = _rows(run_dir, "results.jsonl") + _rows(run_dir, "repeats.jsonl")
    assert (
        len(measured) == 8 and len(_rows(run_dir, "warmup.jsonl")) == 4
    )  # the default warm-up: each cell once
    for r in measured:  # the runtime's own per-turn counts, checked against the cell's shape
        spec = r["id"].split("@")[0].split("-")
        p_, n_, d_ = (int(s[1:]) for s in spec[:3])
        assert r["status"] == "ok" and r["prefill_tokens"] == p_ and r["decode_tokens"] == n_
        assert [t["prefill_tokens"] for t in r["turns"][:-1]] == ([d_] if d_ else [])
        assert r["ttft_ms"] > 0
        # no --threads: the runtime's default, counted from the engine's thread pool (threads.py)
        assert (r["threads"], r["threads_ran"], r["threads_from"]) == (None, 4, "counted")
    warm = _rows(run_dir, "warmup.jsonl")  # each repetition and warm-up on its own fresh engine
    assert sorted(r["engine_load"] for r in measured + warm) == list(range(1, 13))
    outcome = json.loads((run_dir / "devices" / "this-host" / "outcome.json").read_text())
    assert outcome["model_loads"] == 12
    assert all(r["n_threads"] == 4 and r["n_threads_from"] == "counted" for r in rows)
    bench = json.loads((run_dir / "bench.json").read_text())
    assert len(bench["cells"]) == 4 and bench["rows"] == rows


def test_each_cell_runs_on_an_engine_with_its_own_settings_and_says_its_threads(tmp_path, local_inventory):
    p, run_dir = _bench(tmp_path, local_inventory, "-p", "8", "-n", "4,12", "-r", "1", "--threads", "1,2",
                        "-o", "sql")  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    results, warm = _rows(run_dir, "results.jsonl"), _rows(run_dir, "warmup.jsonl")  # warm-up: the default
    assert len(warm) == 4 and sorted(r["engine_load"] for r in results + warm) == list(range(1, 9))
    for r in results:  # the count asked is the count the engine's pool was seen to run
        assert r["threads_ran"] == r["threads"] and r["threads"] in (1, 2) and r["threads_from"] == "counted"
    outcome = json.loads((run_dir / "devices" / "this-host" / "outcome.json").read_text())
    assert outcome["model_loads"] == 8
    db = sqlite3.connect(":memory:")
    db.executescript((run_dir / "bench-rows.sql").read_text())
    assert db.execute("SELECT count(*), sum(n_gen) FROM edgefarm_bench WHERE test LIKE 'tg%'").fetchone() == (
        4,
        32,
    )
    assert db.execute("SELECT DISTINCT n_threads FROM edgefarm_bench ORDER BY 1").fetchall() == [(1,), (2,)]


def test_a_shape_over_the_models_context_is_refused_with_its_numbers(tmp_path, local_inventory):
    p, run_dir = _bench(tmp_path, local_inventory, "-p", "1000,2000", "-n", "8", "-d", "100")
    assert p.returncode == 2 and run_dir is None
    assert "d100 + p2000 + n8 = 2108 tokens > the limit of 2048" in p.stderr
    assert "d100 + p1000" not in p.stderr and "fix:" in p.stderr
    p, _ = _bench(tmp_path, local_inventory, "-p", "64", "-n", "8", "--max-num-tokens", "64")
    assert p.returncode == 2 and "p64 + n8 = 72 tokens > the limit of 64" in p.stderr


def test_sustain_runs_the_grid_pass_after_pass_and_sets_each_pass_against_the_first(
    tmp_path, local_inventory
):
    p, run_dir = _bench(tmp_path, local_inventory, "-p", "16,40", "-n", "4,8", "--sustain", "3", "-o", "json")
    assert p.returncode == 0, p.stderr[-3000:]
    rows = json.loads(p.stdout)
    assert len(rows) == 8 and all(r["repetitions"] == 3 and r["errors"] == 0 for r in rows)  # a cell's passes
    measured = _rows(run_dir, "results.jsonl") + _rows(run_dir, "repeats.jsonl")
    assert sorted(r["sustain_pass"] for r in measured) == [1] * 4 + [2] * 4 + [3] * 4
    by_load = sorted(measured, key=lambda r: r["engine_load"])  # a fresh engine per row: the loads' order
    assert len({r["engine_load"] for r in by_load}) == 12 and by_load[0]["engine_load"] > 1  # after a warm-up
    assert [r["sustain_pass"] for r in by_load] == [1] * 4 + [2] * 4 + [3] * 4  # pass after pass
    for r in measured:
        assert r["decode_tokens"] == int(r["id"].split("-")[1][1:])
    outcome = json.loads((run_dir / "devices" / "this-host" / "outcome.json").read_text())
    assert outcome["model_loads"] == 16
    curve = json.loads((run_dir / "bench.json").read_text())["sustain"]["this-host"]
    assert [x["sustain_pass"] for x in curve["passes"]] == [1, 2, 3]
    assert curve["passes"][0]["pct_of_first"]["decode_tps"] == 100.0 and len(curve["passes"][2]["cells"]) == 4
    assert curve["steady_pct"]["decode_tps"] > 0 and curve["passes"][2]["end_s"] > curve["passes"][0]["end_s"] > 0
    assert "this-host: " in p.stderr and "of pass 1 (median over the cells)" in p.stderr
    assert "<section id='sustain'>" in (run_dir / "report.html").read_text()
    run = json.loads((run_dir / "run.json").read_text())
    assert run["bench"]["request"]["sustain"] == 3 and run["bench"]["request"]["repetitions"] == 1
    p, none = _bench(tmp_path / "r", local_inventory, "-p", "16", "-n", "4", "--sustain", "3", "-r", "2")
    assert p.returncode == 2 and "repetitions are its passes" in p.stderr and none is None


def test_resume_takes_every_flag_from_run_json_and_runs_nothing_twice(tmp_path, local_inventory):
    """The run's resume (cli/resume.py, issue 42): `bench --resume DIR` alone carries the grid, the
    devices, the inventory and the model; a typed flag that differs is refused; a bench folder is not
    `run --resume`'s."""
    p, run_dir = _bench(tmp_path, local_inventory, "-p", "8", "-n", "4", "-r", "2")
    assert p.returncode == 0, p.stderr[-3000:]
    # the conditions it ran under (issue 41), on its pages as on a run's report: this host was sampled
    said = " ".join(p.stderr.split())
    assert "conditions: this host: other processes " in said and "cores of " in said, said
    assert "- conditions: this host: other processes " in (run_dir / "bench-rows.md").read_text()
    assert "<section id='conditions'><h2>Conditions" in (run_dir / "report.html").read_text()
    again = edgefarm("bench", "--resume", str(run_dir), "-p", "16", "--inventory", str(local_inventory()),
                     "--devices", "local", "--model", str(TINY_TEXT))  # fmt: skip
    said = " ".join(again.stderr.split())
    assert again.returncode == 2 and "--n-prompt 16 differs from this run's recorded --n-prompt 8" in said, said
    other = edgefarm("run", "--resume", str(run_dir))
    said = " ".join(other.stderr.split())
    assert other.returncode == 2 and f"continue it with `edgefarm bench --resume {run_dir}`" in said, said
    again = edgefarm("bench", "--resume", str(run_dir), "-o", "csv")
    assert again.returncode == 0, again.stderr[-3000:]
    said = " ".join(again.stderr.split())
    assert f"with its recorded flags: --devices local --inventory {local_inventory()}" in said, said
    assert "--n-prompt 8 --n-gen 4 --repetitions 2" in said
    assert again.stdout.count("\n") == 3  # header, pp8, tg4
    outcome = json.loads((run_dir / "devices" / "this-host" / "outcome.json").read_text())
    assert (
        outcome["sessions"] == 2 and outcome["model_loads"] == 3
    )  # a warm-up and 2 repetitions: nothing left
    run = json.loads((run_dir / "run.json").read_text())
    assert run["flags"]["devices"] == "local" and run["bench"]["request"]["prompts"] == "8"


def test_report_html_and_compare_of_two_bench_runs(tmp_path, local_inventory):
    runs = []
    for threads in ("1", "2"):
        out = tmp_path / f"runs{threads}"
        p = edgefarm("bench", "--devices", "local", "--inventory", str(local_inventory()), "--out", str(out),
                     "--model", str(TINY_TEXT), "-p", "16", "-n", "8", "-d", "0,64", "-r", "2", "--threads", threads)  # fmt: skip
        assert p.returncode == 0, p.stderr[-3000:]
        runs.append(only_run_dir(out))
    page = (runs[0] / "report.html").read_text()
    assert page.count("<svg") == 1 and "<h2>p16 n8 d64</h2>" in page
    c = edgefarm("compare", str(runs[0]), str(runs[1]))
    assert c.returncode == 0, c.stderr[-2000:]
    assert "| this-host | p16-n8-d0-cpu-t1 vs p16-n8-d0-cpu-t2 | 2/2 |" in c.stdout
    assert c.stdout.count("| this-host |") == 2
    for run in runs:  # issue 41: a bench records this host's load as a run does (farm/conditions.py)
        host = json.loads((run / "run.json").read_text())["conditions"]["host"]
        assert host["ticks"] >= 2 and host["other_cores_mean"] is not None and host["own_cores_mean"] is not None


def test_an_interrupted_depth_bench_writes_its_reports_and_resumes_to_the_end(tmp_path, local_inventory):
    """Issue 41: Ctrl-C while a depth grid ran gave a ZeroDivisionError (a shape with no measured
    depth), exit 1 and no report; the resume crashed the same way even when the device was refused as
    busy. The test sends the SIGINT as soon as the first repetition is on disk: the n0 engine's 200
    repetitions are still running, so the n8 cells have none."""
    inv, out = local_inventory(), tmp_path / "runs"
    flags = ("--devices", "local", "--inventory", str(inv), "--model", str(TINY_TEXT), "--db", "none")
    env = {**os.environ, "COLUMNS": "200"}
    env.pop("EDGEFARM_INVENTORY", None)
    bench = subprocess.Popen([sys.executable, "-m", "orchestrator", "bench", *flags, "--out", str(out), "-p", "16,32",
                              "-n", "0,8", "-d", "0,64", "-r", "50"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, cwd=REPO, env=env)  # fmt: skip
    end = time.monotonic() + 120
    while (
        not list(out.glob("*/devices/this-host/results.stream.jsonl"))
        or not next(out.glob("*/devices/this-host/results.stream.jsonl")).read_text()
    ):
        assert bench.poll() is None and time.monotonic() < end, bench.communicate()
        time.sleep(0.02)
    bench.send_signal(signal.SIGINT)
    _, err = bench.communicate(timeout=120)
    run_dir = only_run_dir(out)
    assert bench.returncode == 130 and "Traceback" not in err, err[-3000:]
    assert f"not measured; continue with: edgefarm bench --resume {run_dir}" in " ".join(err.split())
    page, md = (run_dir / "report.html").read_text(), (run_dir / "bench-rows.md").read_text()
    assert "partial grid: " in page and "<h2>p16 n8: tokens/s against depth</h2><p>not measured" in page
    assert md.count("| not measured |") >= 8  # the n8 cells' pp and tg rows
    assert len(_rows(run_dir, "results.jsonl") + _rows(run_dir, "repeats.jsonl")) < 400

    with held(LocalDevice("this-host", tmp_path / "work"), "20261205-000000-beef"):  # another live run
        busy = edgefarm("bench", "--resume", str(run_dir), *flags)
    assert busy.returncode == 3 and "Traceback" not in busy.stderr, busy.stderr[-3000:]
    assert "this-host is in use by run 20261205-000000-beef" in " ".join(busy.stderr.split())
    assert "partial grid: " in (run_dir / "report.html").read_text()

    done = edgefarm("bench", "--resume", str(run_dir), *flags, "-o", "json")
    assert done.returncode == 0, done.stderr[-3000:]
    rows = json.loads(done.stdout)
    assert len(rows) == 12 and all(r["repetitions"] == 50 and len(r["samples_ts"]) == 50 for r in rows)
    assert len(_rows(run_dir, "results.jsonl") + _rows(run_dir, "repeats.jsonl")) == 400  # nothing twice
    assert "partial grid" not in (run_dir / "report.html").read_text() and "not measured" not in done.stderr
