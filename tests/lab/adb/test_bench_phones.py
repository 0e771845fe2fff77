"""`edgefarm bench` on two lab phones (mksh + toybox, real adb servers, the native runner on the real
runtime's C API): exact token counts the runtime reports, a fresh engine per repetition and the CPU
threads it ran with."""

from __future__ import annotations

import json
from pathlib import Path

from .test_native_runner import PHONES, _jsonl, _run_dir, edgefarm

TINY_TEXT = Path(__file__).resolve().parents[3] / "data" / "models" / "tiny-text.litertlm"


def test_two_phones_bench_with_exact_counts_and_a_fresh_engine_per_repetition(adb_lab, tmp_path):
    out = tmp_path / "runs"
    p = edgefarm(adb_lab, "bench", "--devices", ",".join(PHONES), "--model", str(TINY_TEXT), "--out", str(out),
                 "-p", "16,40", "-n", "8,12", "-d", "0,64", "-r", "2", "--backend", "cpu", "-o", "json",
                 "--settle-s", "1")  # fmt: skip  # bench settles by default: a 1-s window, not 60 s of flat readings
    assert p.returncode == 0, p.stderr[-3000:]
    rows = json.loads(p.stdout)
    assert {r["device"] for r in rows} == set(PHONES)
    assert len(rows) == 2 * 8 * 2  # 2 phones x 8 cells x (pp row + tg row)
    assert all(r["repetitions"] == 2 and r["errors"] == 0 and r["avg_ts"] > 0 for r in rows)
    run_dir = _run_dir(out)
    for name in PHONES:
        folder = run_dir / "devices" / name
        measured = _jsonl(folder / "results.jsonl") + _jsonl(folder / "repeats.jsonl")
        assert len(measured) == 16
        for r in measured:  # the runtime's own per-turn counts, checked against the cell's shape
            p_, n_, d_ = (int(s[1:]) for s in r["id"].split("@")[0].split("-")[:3])
            assert r["status"] == "ok" and r["runner"] == "native", r
            assert r["prefill_tokens"] == p_ and r["decode_tokens"] == n_
            assert [t["prefill_tokens"] for t in r["turns"][:-1]] == ([d_] if d_ else [])
            assert r["backend"] == "cpu" and (r["threads_ran"], r["threads_from"]) == (4, "counted")
        warm = _jsonl(folder / "warmup.jsonl")  # the default warm-up: each cell once, first
        loads = sorted(r["engine_load"] for r in measured + warm)
        assert len(warm) == 8 and loads == list(range(1, 25))  # an engine per item
        outcome = json.loads((folder / "outcome.json").read_text())
        assert outcome["error"] == "" and outcome["model_loads"] == 24, outcome
    assert all(r["n_threads"] == 4 for r in rows)  # the runtime's default, counted on the phone
