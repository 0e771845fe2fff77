"""`edgefarm bench --sustain N`: the passes in time order on the runner, each pass's speed against the
first per cell, and the plan's refusals (pure parts; the lab tests run it: tests/lab/local/test_bench.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from android_runner.bench import bench_order
from android_runner.contract import JobItem, SampleResult
from orchestrator.bench.grid import Cell
from orchestrator.bench.html_page import render
from orchestrator.bench.plan import BenchRequest, plan_bench
from orchestrator.bench.sustained import headers, summary, sustained, table
from orchestrator.errors import ConfigError
from orchestrator.inventory import Selection
from orchestrator.measure import expand, split
from orchestrator.model_facts import ModelFacts
from orchestrator.models import ModelSummary

A, B = Cell(64, 16, 0, "cpu", None), Cell(256, 16, 512, "cpu", None)
OTHER_N = Cell(64, 32, 0, "cpu", None)  # another engine (n_gen is an engine setting)


def _items(cells, sustain: int, warmup: int = 0) -> list[JobItem]:
    return [
        JobItem(id=s.id, turns=(), bench=s.bench)
        for s in expand([c.sample() for c in cells], 1, warmup, sustain)
    ]


def test_the_runner_keeps_sustain_passes_in_time_order_whatever_their_engine():
    order = [it.id for it in bench_order(_items([A, OTHER_N, B], sustain=3, warmup=1))]
    assert order == [f"{A.id}@warmup1", A.id, B.id, OTHER_N.id,  # pass 1: grouped by engine
                     f"{A.id}@s2", f"{B.id}@s2", f"{OTHER_N.id}@s2",
                     f"{A.id}@s3", f"{B.id}@s3", f"{OTHER_N.id}@s3"]  # fmt: skip
    # without --sustain: one group per engine key, repetitions inside it (one load per engine)
    items = [
        JobItem(id=s.id, turns=(), bench=s.bench)
        for s in expand([A.sample(), OTHER_N.sample(), B.sample()], 2)
    ]
    assert [it.id for it in bench_order(items)] == [A.id, B.id, f"{A.id}@r2", f"{B.id}@r2", OTHER_N.id,
                                                     f"{OTHER_N.id}@r2"]  # fmt: skip


def _rows(speeds: dict[int, dict[Cell, tuple[float, float]]], temps: dict[int, float]) -> list[SampleResult]:
    """A device's results + repeats as the session writes them (measure.split marks the passes)."""
    samples = [A.sample(), B.sample()]
    out = []
    for k, by_cell in speeds.items():
        for c, (pre, dec) in by_cell.items():
            rid = c.id if k == 1 else f"{c.id}@s{k}"
            out.append(SampleResult(id=rid, status="ok", prefill_tps=pre, decode_tps=dec, wall_ms=1000.0,
                                    thermal_after={"max_temp_c": temps[k], "thermal_status": 0 if k < 3 else 2}))  # fmt: skip
    first, repeats, _ = split(samples, out)
    return first + repeats


def test_each_pass_is_the_median_over_cells_of_the_cell_against_its_own_first_pass():
    rows = _rows({1: {A: (1000.0, 200.0), B: (400.0, 100.0)},
                  2: {A: (900.0, 180.0), B: (400.0, 95.0)},
                  3: {A: (500.0, 100.0), B: (300.0, 60.0)}}, {1: 30.0, 2: 38.0, 3: 45.0})  # fmt: skip
    s = sustained([A, B], rows)
    p = s["passes"]
    assert [x["sustain_pass"] for x in p] == [1, 2, 3] and [x["end_s"] for x in p] == [2.0, 4.0, 6.0]
    assert p[0]["pct_of_first"] == {"prefill_tps": 100.0, "decode_tps": 100.0}  # the catalogue's names
    assert p[1]["pct_of_first"]["prefill_tps"] == pytest.approx(95.0)  # median of 90% and 100%
    assert p[1]["pct_of_first"]["decode_tps"] == pytest.approx(92.5)  # median of 90% and 95%
    assert s["steady_pct"] == pytest.approx({"prefill_tps": 62.5, "decode_tps": 55.0})
    assert p[2]["cells"][B.id] == {"prefill_tps": 300.0, "decode_tps": 60.0} and p[2]["max_temp_c"] == 45.0
    assert s["first_throttle_s"] == pytest.approx(5.0)  # the first row of pass 3 reported status 2
    line = summary("pixel", s)
    assert "first throttle after 5.0 s" in line and "pass 3 at prefill 62% and decode 55% of pass 1" in line
    assert s["ending"] == "graceful" and line.endswith(f"graceful: {s['ending_why']}")  # slowed, no OS stop
    assert [r[:5] for r in table({"pixel": s})][1] == ["pixel", "2", "4.0", "95.0", "92.5"]
    assert headers()[3:5] == ("Prefill % of pass 1", "Decode % of pass 1")  # the catalogue's labels
    page = render({"run_id": "x", "model": {}, "cells": [], "sustain": {"pixel": s}})
    assert "<section id='sustain'>" in page and "<td>92.5</td>" in page and "<th>Decode % of pass 1</th>" in page


def test_one_pass_is_no_curve():
    assert sustained([A, B], _rows({1: {A: (1.0, 1.0), B: (1.0, 1.0)}}, {1: 30.0})) is None


MODEL = ModelSummary(
    path=Path("m.litertlm"), size_bytes=1, sha256="0" * 64, vision=False, audio=False, max_context_tokens=2048
)


class _Dev:
    name, kind, backend, threads = "this-host", "local", "cpu", None


def _plan(cluster=None, **kw):
    return plan_bench(BenchRequest(prompts="64", gens="16", **kw), MODEL, Selection((_Dev(),), (), ()), None,
                      cluster=cluster)  # fmt: skip


def test_sustain_runs_the_grid_n_times_and_refuses_repetitions_and_bounds():
    plan = _plan(sustain=4, repetitions=1)
    assert plan.options["this-host"].sustain == 4 and plan.options["this-host"].repeat == 1
    assert plan.request.grid_record()["sustain"] == 4  # run.json: --resume takes it
    with pytest.raises(ConfigError, match="repetitions are its passes"):
        _plan(sustain=4, repetitions=3)
    with pytest.raises(ConfigError, match="outside 1..100"):
        _plan(sustain=101, repetitions=1)


def test_parallel_local_means_nothing_on_a_cluster():
    with pytest.raises(ConfigError, match="--parallel-local"):
        _plan(cluster=object(), parallel_local=True)
    assert _plan(cluster="the farm").cluster == "the farm"


def test_a_dynamic_cache_model_is_refused_a_grid_of_several_shapes_and_runs_one():
    """tiny-text-dynamic's KV cache grows to the deepest cell and never shrinks within one engine: a grid
    whose shapes share an engine would measure every later cell at the deepest one's cost."""
    facts = ModelFacts(kv_cache_tokens=None, kv_bytes_per_token=1024.0)
    dynamic = replace(MODEL, path=Path("tiny-text-dynamic.litertlm"), facts=facts)
    sel = Selection((_Dev(),), (), ())
    with pytest.raises(ConfigError, match="dynamic KV cache") as e:
        plan_bench(BenchRequest(prompts="64", gens="16", depths="0,1024"), dynamic, sel, None)
    assert "-p 64 -d 0` then `-p 64 -d 1024`" in e.value.fix
    assert plan_bench(BenchRequest(prompts="64", gens="16,32", depths="1024"), dynamic, sel, None).grid
    static = replace(MODEL, facts=ModelFacts(kv_cache_tokens=2048, kv_bytes_per_token=1024.0))
    assert plan_bench(BenchRequest(prompts="64", gens="16", depths="0,1024"), static, sel, None).grid
