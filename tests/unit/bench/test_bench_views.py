"""A bench's report.html (curves against depth, ★ only for a clear best), the bandwidth bound, and the
comparison of two bench runs cell by cell."""

from __future__ import annotations

import csv
import io
import math
import re
import statistics

import pytest

from android_runner.contract import SampleResult
from orchestrator.bench.compare import compare_bench, comparison_text, speed_ratio
from orchestrator.bench.grid import Cell
from orchestrator.bench.html_page import best, cut_short, measured, partial_note, render
from orchestrator.bench.printers import PRINTERS
from orchestrator.bench.results import Figure, cell_results
from orchestrator.bench.rows import llama_rows
from orchestrator.decode_bound import bandwidths, bound_ts, decode_bytes_per_token
from orchestrator.farm.run_json import ModelStamp
from orchestrator.model_facts import ModelFacts, SectionFacts
from orchestrator.stats import t_quantile_975


def _fig(values):
    f = Figure(tuple(values))
    return f.to_json()


def _cell(device, d, pre, dec, backend="cpu"):
    return {"device": device, "cell": f"p32-n16-d{d}-{backend}", "n_prompt": 32, "n_gen": 16, "n_depth": d,
            "backend": backend, "threads": None, "backend_ran": backend, "repetitions": len(pre), "errors": [],
            "prefill_tps": _fig(pre), "decode_tps": _fig(dec), "ttft_ms": _fig([5.0, 6.0]), "init_ms": 30.0,
            "engine_load": 1, "peak_rss_mb": 88.0, "decode_bound_ts": None}  # fmt: skip


def test_best_is_marked_only_when_its_interval_is_clear_of_every_other():
    fast, slow = (
        _cell("a", 0, [100, 101, 102], [10, 10.5, 11]),
        _cell("b", 0, [50, 51, 52], [10.2, 10.4, 10.8]),
    )
    assert best([fast, slow], "prefill_tps") is fast
    assert best([fast, slow], "decode_tps") is None  # decode intervals overlap: no best
    page = render({"run_id": "r", "model": {"path": "m"}, "cells": [fast, slow]})
    assert page.count("★") == 1 + 1  # the prefill mark, and the legend sentence that explains it


def test_the_page_draws_speed_against_depth_per_device_and_backend():
    cells = [_cell(dev, d, [100 - d / 100] * 2 + [99], [10.0, 10.1, 9.9], b)
             for dev, b in (("a", "cpu"), ("a", "gpu"), ("b", "cpu")) for d in (0, 512, 1024)]  # fmt: skip
    page = render({"run_id": "r", "model": {"path": "m"}, "cells": cells})
    assert page.count("<svg") == 1 and "depth (tokens in the cache before the prompt)" in page
    assert {"a cpu", "a gpu", "b cpu"} <= set(re.findall(r">([ab] [cg]pu)<", page))  # the legend
    assert page.count("<h2>p32 n16 d") == 3  # a table per shape
    one_depth = render({"run_id": "r", "model": {"path": "m"}, "cells": cells[:1]})
    assert "<svg" not in one_depth  # no curve from one depth


def _facts(kv_tokens):
    return ModelFacts(
        sections=(SectionFacts("tf_lite_prefill_decode", 0, 1_000_000, {}, "", (), ()),
                  SectionFacts("tf_lite_vision_encoder", 0, 9_000_000, {}, "", (), ()),
                  SectionFacts("tf_lite_embedder", 0, 4_000_000, {}, "", (), ())),
        kv_cache_tokens=kv_tokens, kv_bytes_per_token=100.0,
    )  # fmt: skip


def test_the_bandwidth_bound_counts_the_decoders_weights_and_the_cache_it_reads():
    # a fixed exported cache of 2048 tokens: read whole at any depth; encoders and embedder not read
    assert decode_bytes_per_token(_facts(2048), 10) == 1_000_000 + 204_800
    assert decode_bytes_per_token(_facts(None), 10) == 1_000_000 + 1_000
    assert bound_ts(10.0, _facts(2048), 10) == pytest.approx(10e9 / 1_204_800)
    assert bound_ts(None, _facts(2048), 10) is None and bound_ts(10.0, None, 10) is None
    entries = [
        {"name": "p", "memory_bandwidth_gbs": 51.2},
        {"name": "q"},
        {"name": "r", "memory_bandwidth_gbs": 9},
    ]
    assert bandwidths(entries, {"p", "q"}) == {"p": 51.2}  # q declares none: nothing is guessed


def test_a_speed_ratio_between_runs_is_welchs_interval_on_the_log():
    a, b = _fig([100, 104, 96, 100]), _fig([120, 118, 122, 120])
    r = speed_ratio(a, b)
    va = (statistics.stdev([100, 104, 96, 100]) / 100) ** 2 / 4
    vb = (statistics.stdev([120, 118, 122, 120]) / 120) ** 2 / 4
    df = (va + vb) ** 2 / (va**2 / 3 + vb**2 / 3)
    half = t_quantile_975(int(df)) * math.sqrt(va + vb)
    assert r.ratio == pytest.approx(1.2) and r.lo == pytest.approx(1.2 * math.exp(-half))
    assert r.significant
    assert not speed_ratio(a, _fig([101, 99, 103, 97])).significant
    assert speed_ratio(_fig([100]), b).lo is None


def test_two_bench_runs_pair_cell_by_cell_and_by_shape_across_settings():
    a = {
        "model": {"sha256": "x"},
        "cells": [_cell("p", 0, [10, 11], [5, 5]), _cell("p", 512, [10, 11], [5, 5])],
    }
    b = {
        "model": {"sha256": "x"},
        "cells": [_cell("p", 0, [20, 21], [5, 5], "gpu"), _cell("q", 0, [1, 1], [1, 1])],
    }
    c = compare_bench(a, b)
    assert [(x.device, x.cell) for x in c.cells] == [("p", "p32-n16-d0-cpu vs p32-n16-d0-gpu")]
    assert c.only_a == ("p p32-n16-d512-cpu",) and c.only_b == ("q p32-n16-d0-cpu",)
    assert c.cells[0].ratios["prefill_tps"].ratio == pytest.approx(41 / 21)
    assert "only in B: q p32-n16-d0-cpu" in comparison_text(c)


def test_a_partial_grid_gives_its_page_and_rows_with_the_unmeasured_cells_said():
    """Issue 41: an interrupted depth bench left a (prompt, generated) pair with no measured cell at any
    depth, and depth_chart divided by its zero panels (ZeroDivisionError: no report.html, no rows)."""
    grid = [Cell(32, n, d, "cpu", None) for n in (0, 16) for d in (0, 512)]
    done, cut = grid[0], grid[1]  # n0 at d0: all 4 repetitions; n0 at d512: 2 of 4; n16: none
    rows = [SampleResult(id=done.id if r == 1 else f"{done.id}@r{r}", status="ok", prefill_tokens=32,
                         prefill_tps=1000.0 + r, backend="cpu") for r in (1, 2, 3, 4)]  # fmt: skip
    rows += [SampleResult(id=cut.id if r == 1 else f"{cut.id}@r{r}", status="ok", prefill_tokens=32,
                          prefill_tps=900.0 + r, backend="cpu") for r in (1, 2)]  # fmt: skip
    results = cell_results("dev", grid, rows, asked=4)
    cells = [{**r.to_json(), "decode_bound_ts": None} for r in results]
    assert [measured(c) for c in cells] == [True, True, False, False]
    assert [cut_short(c) for c in cells] == [False, True, False, False]
    assert partial_note(cells) == "partial grid: 1 of 4 cells measured in full, 1 cut short, 2 not measured"
    page = render({"run_id": "r", "model": {"path": "m"}, "cells": cells})
    assert page.count("<svg") == 1  # n0's curve over depth; n16 has none to draw
    assert "<h2>p32 n16: tokens/s against depth</h2><p>not measured" in page
    assert ">2 of 4<" in page and page.count(">not measured<") == 2 * 2 and page.count(">0 of 4<") == 2
    assert "partial grid: 1 of 4 cells measured in full" in page and "bench --resume" in page
    llama = [row for r in results for row in llama_rows(r, ModelStamp(path="m"), "t")]
    md = PRINTERS.get("md")(llama).splitlines()
    assert [line.split(" | ")[5] for line in md[2:]] == ["1002.50 ± 1.29", "901.50 ± 0.71", "not measured",
                                                         "not measured", "not measured", "not measured"]  # fmt: skip
    assert next(csv.DictReader(io.StringIO(PRINTERS.get("csv")(llama[2:]))))["avg_ts"] == ""
    complete = render({"run_id": "r", "model": {"path": "m"}, "cells": cells[:1]})
    assert partial_note(cells[:1]) == "" and "partial grid" not in complete and "not measured" not in complete
