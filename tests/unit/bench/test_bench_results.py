"""A bench's figures over its repetitions, llama-bench's rows, and the five outputs read back by real
readers (csv, json, sqlite3)."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import statistics
from dataclasses import replace

import pytest

from android_runner.contract import SampleResult
from orchestrator.bench.grid import Cell
from orchestrator.bench.printers import PRINTERS, SQL_TABLE
from orchestrator.bench.results import cell_results
from orchestrator.bench.rows import FIELDS, LLAMA_FIELDS, LlamaRow, llama_rows
from orchestrator.farm.run_json import ModelStamp
from orchestrator.stats import mean_t_interval, t_quantile_975

CELL = Cell(64, 16, 128, "cpu", 2)
MODEL = ModelStamp(path="m.litertlm", size_bytes=1234)


def _row(rep: int, pre: float, dec: float, status: str = "ok", **kw) -> SampleResult:
    rid = CELL.id if rep == 1 else f"{CELL.id}@r{rep}"
    return SampleResult(id=rid, status=status, prefill_tokens=64, prefill_tps=pre, decode_tokens=16,
                        decode_tps=dec, ttft_ms=1000 * (64 / pre + 1 / dec), init_ms=40.0, engine_load=1,
                        peak_rss_mb=80.0 + rep, backend="cpu", **kw)  # fmt: skip


def test_every_repetition_is_kept_with_mean_sd_and_a_t_interval():
    pre, dec = [1000.0, 1100.0, 900.0, 1050.0], [200.0, 210.0, 190.0, 205.0]
    rows = [_row(i + 1, p, d) for i, (p, d) in enumerate(zip(pre, dec))]
    rows.append(
        _row(5, 1.0, 1.0, status="error", error="prefill: the runtime processed 63 tokens, 64 were asked")
    )
    [r] = cell_results("dev", [CELL], rows)
    assert r.repetitions == 4 and r.figure("prefill_tps").samples == tuple(pre)
    assert r.figure("prefill_tps").mean == pytest.approx(statistics.mean(pre))
    assert r.figure("decode_tps").sd == pytest.approx(statistics.stdev(dec))
    half = t_quantile_975(3) * statistics.stdev(pre) / 2
    assert r.figure("prefill_tps").interval == pytest.approx((statistics.mean(pre) - half, statistics.mean(pre) + half))
    assert r.errors == ("error: prefill: the runtime processed 63 tokens, 64 were asked",)
    assert r.peak_rss_mb == 84.0 and r.init_ms == 40.0 and r.engine_load == 1


def test_energy_is_averaged_over_trusted_rows_only():
    rows = [_row(1, 1000, 200, energy_j=0.08, energy_mj_per_token=5.0), _row(2, 1000, 200, energy_j=0.8,
            energy_mj_per_token=50.0, energy_unreliable="charging"),
            _row(3, 1000, 200, energy_j=0.112, energy_mj_per_token=7.0)]  # fmt: skip
    [r] = cell_results("dev", [CELL], rows)
    assert r.figure("energy_mj_per_token").samples == (5.0, 7.0) and r.energy_untrusted == "charging"


def test_llama_rows_pp_at_depth_and_tg_after_the_prompt():
    [r] = cell_results("dev", [CELL], [_row(1, 1000.0, 200.0), _row(2, 1250.0, 250.0)])
    pp, tg = llama_rows(replace(r, decode_bound_ts=1000.0), MODEL, "2026-01-01T00:00:00")
    assert (pp.test, pp.n_prompt, pp.n_gen, pp.n_depth) == ("pp64", 64, 0, 128)
    assert (tg.test, tg.n_prompt, tg.n_gen, tg.n_depth) == ("tg16", 0, 16, 128 + 64)
    assert pp.samples_ts == (1000.0, 1250.0) and pp.avg_ts == 1125.0
    assert pp.samples_ns == (64_000_000, 51_200_000)  # 64 tokens at 1000 and 1250 t/s
    assert tg.decode_pct_of_bandwidth_bound == 22.5 and pp.decode_pct_of_bandwidth_bound is None
    assert pp.ttft_ms is None and tg.ttft_ms == pytest.approx((69.0 + 55.2) / 2)  # a tg-row measure: its mean
    assert list(pp.to_dict()) == list(FIELDS) and FIELDS[: len(LLAMA_FIELDS)] == LLAMA_FIELDS
    assert pp.to_dict()["samples_ts"] == [1000.0, 1250.0]  # lists in every output


def test_a_row_is_one_record_with_one_codec():
    """to_dict/from_dict round-trip every row; a row an older edgefarm wrote without a field reads it as
    None (the results database and bench.json keep rows whole)."""
    [r] = cell_results("dev", [CELL], [_row(1, 1000.0, 200.0), _row(2, 1250.0, 250.0)])
    for row in llama_rows(replace(r, decode_bound_ts=1000.0), MODEL, "t"):
        assert LlamaRow.from_dict(json.loads(json.dumps(row.to_dict()))) == row
    older = {k: v for k, v in llama_rows(r, MODEL, "t")[1].to_dict().items() if k != "energy_mj_per_token_sd"}
    assert LlamaRow.from_dict(older).energy_mj_per_token_sd is None and LlamaRow.from_dict(older).avg_ts == 225.0


def test_n_threads_is_the_count_the_runtime_ran_and_says_how_it_is_known():
    """The cell asked 2 threads: the rows name what the engine ran (its runner's count) and how that is
    known; a runner that says nothing leaves the count asked, unmarked."""
    [r] = cell_results(
        "dev", [CELL], [_row(1, 1000.0, 200.0, threads=2, threads_ran=2, threads_from="counted")]
    )
    pp, tg = llama_rows(r, MODEL, "t")
    assert (pp.n_threads, pp.n_threads_from) == (2, "counted") and tg.n_threads == 2
    default = Cell(64, 16, 0, "cpu", None)
    ran = _row(1, 1000.0, 200.0, threads_ran=4, threads_from="runtime default")
    [r] = cell_results("dev", [default], [SampleResult(**{**vars(ran), "id": default.id})])
    assert [(x.n_threads, x.n_threads_from) for x in llama_rows(r, MODEL, "t")] == [(4, "runtime default")] * 2
    [r] = cell_results("dev", [CELL], [_row(1, 1000.0, 200.0)])  # an older runner's rows
    assert [(x.n_threads, x.n_threads_from) for x in llama_rows(r, MODEL, "t")] == [(2, "")] * 2


def test_a_single_repetition_has_no_interval_and_zero_sd_as_llama_bench_prints():
    [r] = cell_results("dev", [CELL], [_row(1, 1000.0, 200.0)])
    pp, _ = llama_rows(r, MODEL, "t")
    assert pp.stddev_ts == 0.0 and pp.ci95_lo_ts is None


def test_t_quantiles():
    for df, exact in ((1, 12.7062), (4, 2.7764), (40, 2.0211), (60, 2.0003), (120, 1.9799)):  # any t table
        assert t_quantile_975(df) == pytest.approx(exact, abs=1e-3)
    assert mean_t_interval([3.0]) is None


def _rows():
    rs = cell_results(
        "dev", [CELL, Cell(32, 0, 0, "cpu", None)], [_row(1, 1000.0, 200.0), _row(2, 1100.0, 220.0)]
    )
    return [row for r in rs for row in llama_rows(r, MODEL, "t")]


def test_outputs_read_back_by_their_own_readers():
    rows = _rows()
    assert len(rows) == 3  # pp + tg of the first cell; the second cell never ran (pp only, n_gen 0)
    assert json.loads(PRINTERS.get("json")(rows)) == [r.to_dict() for r in rows]
    assert [json.loads(x) for x in PRINTERS.get("jsonl")(rows).splitlines()] == [r.to_dict() for r in rows]
    table = list(csv.DictReader(io.StringIO(PRINTERS.get("csv")(rows))))
    assert [t["test"] for t in table] == ["pp64", "tg16", "pp32"] and table[0][
        "samples_ts"
    ] == "1000.0 1100.0"
    db = sqlite3.connect(":memory:")
    db.executescript(PRINTERS.get("sql")(rows))
    got = db.execute(f"SELECT test, n_depth, avg_ts FROM {SQL_TABLE} ORDER BY rowid").fetchall()
    assert got == [("pp64", 128, 1050.0), ("tg16", 192, 210.0), ("pp32", 0, None)]
    md = PRINTERS.get("md")(rows)
    assert "| dev | cpu | 2 | pp64 | 128 | 1050.00 ± 70.71 |" in md and md.count("\n") == 5
