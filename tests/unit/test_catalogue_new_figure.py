"""Issue 42's promise of the figure catalogue: a new figure is one catalogue row (its measure and its
device figure) plus its device-side field, and nothing else. A fresh process registers one, energy per
generated token on one power rail, before any reader is imported (readers take the catalogue when they
are imported), gives the runner's row its field, and runs the real code: the run's report (report.json,
report.html, the csv export), the results database (written, read back, its markdown table),
`edgefarm bench`'s cells and llama-bench rows (md and csv), and `--sustain`'s per-pass record, tables and
chart (run and bench). Each must show the figure by its name: a view that names its figures by hand fails."""

from __future__ import annotations

import csv
import io
import json
import statistics
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(
    '''
    import json, sys
    from dataclasses import dataclass

    from android_runner.contract import SampleResult
    from orchestrator import catalogue as cat

    NAME = "rail_mj_per_token"
    cat.register(  # the one catalogue row: a per-sample measure and its device figure
        cat.Measure(NAME, "Rail energy/token", "mJ", False, "{:.1f}", paired=False,
                    views=frozenset({cat.DRILL, cat.KEPT, cat.PER_PASS}), bench=cat.ON_TG),
        cat.Figure(cat.Column(NAME + "_p50", "Rail energy/token p50", "mJ", "{:.2f}"), False, NAME, "p50",
                   "bootstrap", frozenset({cat.WIDE, cat.DETAILS, cat.EXPORT, cat.HISTORY, cat.HISTORY_TABLE})),
    )


    @dataclass(frozen=True)
    class Row(SampleResult):  # the device-side field: the runner's result row carries it
        rail_mj_per_token: float | None = None


    import dataclasses

    from orchestrator.bench.grid import Cell  # the readers, imported after the registration
    from orchestrator.bench.sustained import headers as bench_pass_headers, summary as bench_pass_line
    from orchestrator.bench.sustained import sustained as bench_passes, table as bench_pass_table
    from orchestrator.bench.printers import PRINTERS as BENCH
    from orchestrator.bench.results import cell_results
    from orchestrator.bench.rows import llama_rows
    from orchestrator.devices.types import DeviceInfo
    from orchestrator.history.db import opened
    from orchestrator.history.entry import run_entry
    from orchestrator.history.render import to_md
    from orchestrator.history.series import build_series
    from orchestrator.history.store import read_history, read_samples, write_run
    from orchestrator.report.combine import build_report, device_row, sample_rows
    from orchestrator.report.charts import sustained as sustain_chart
    from orchestrator.report.printers import PRINTERS
    from orchestrator.sustain import curve, markdown as sustain_md
    from orchestrator.farm.run_json import ModelStamp, RunJson
    from orchestrator.farm.types import DeviceOutcome

    RAIL = [float(x) for x in sys.argv[2].split(",")]
    rows = [Row(id=f"s{i}", status="ok", output="yes", ttft_ms=10.0 + i, wall_ms=50.0 + i, decode_tps=20.0,
                prefill_tps=100.0, rail_mj_per_token=v) for i, v in enumerate(RAIL)]
    run = RunJson.from_dict({
        "run_id": "r1", "started_at": "2026-01-01T00:00:00", "finished_at": "2026-01-01T00:01:00",
        "model": {"path": "/m/tiny.litertlm", "sha256": "a" * 64},
        "dataset": {"path": "/d", "sha256": "b" * 64, "sample_ids": [r.id for r in rows]},
        "flags": {}, "versions": {"edgefarm": "0.1.0"},
    })
    device = device_row(DeviceInfo.from_dict({"name": "pixel-8", "model": "Pixel 8"}),
                        DeviceOutcome(name="pixel-8", kind="adb"), rows, None)
    report = build_report(run, [device], sample_rows({"pixel-8": (rows, None)}))
    out = {f: PRINTERS.get(f)(report) for f in ("json", "html", "csv", "md")}

    with opened(sys.argv[1]) as db:
        write_run(db, run_entry(report, "/runs/r1", {}))
        history = read_history(db)
        out["history_figures"] = {k: [f.value, f.lo, f.hi] for k, f in history[0].point.figures.items()}
        kept = read_samples(db, "r1", "pixel-8")  # its history_samples column, added when the database opened
        out["history_samples"] = [kept[r.id].rail_mj_per_token for r in rows]
        out["history_md"] = to_md(build_series(history, lambda r, d: read_samples(db, r, d)))

    cell = Cell(64, 16, 0, "cpu", 2)
    reps = [Row(id=cell.id if i == 0 else f"{cell.id}@r{i + 1}", status="ok", prefill_tps=100.0, decode_tps=20.0,
                ttft_ms=5.0, rail_mj_per_token=v) for i, v in enumerate(RAIL)]
    [result] = cell_results("pixel-8", [cell], reps, asked=len(RAIL))
    bench_rows = llama_rows(result, ModelStamp(path="/m/tiny.litertlm", size_bytes=1), "t")
    out["bench_cell"] = result.to_json()
    out["bench_rows"] = [r.to_dict() for r in bench_rows]
    out["bench_md"] = BENCH.get("md")(bench_rows)
    out["bench_csv"] = BENCH.get("csv")(bench_rows)

    # --sustain: pass 1 then pass 2 (RAIL[0], then RAIL[1]), on the run and on the bench
    passes = [Row(id="s0" if k == 1 else f"s0@s{k}", status="ok", wall_ms=50.0, decode_tps=20.0, prefill_tps=100.0,
                  sustain_pass=k, rail_mj_per_token=RAIL[k - 1]) for k in (1, 2)]
    run_curve = curve(passes).to_json()
    out["sustain_curve"] = run_curve
    out["sustain_md"] = "\\n".join(sustain_md({"pixel-8": run_curve}))
    out["sustain_chart"] = sustain_chart(dataclasses.replace(report, sustain={"pixel-8": run_curve}))
    cell_passes = [dataclasses.replace(r, id=cell.id if r.sustain_pass == 1 else f"{cell.id}@s{r.sustain_pass}")
                   for r in passes]
    bench_curve = bench_passes([cell], cell_passes)
    out["bench_passes"] = bench_curve
    out["bench_pass_headers"] = list(bench_pass_headers())
    out["bench_pass_table"] = bench_pass_table({"pixel-8": bench_curve})
    out["bench_pass_line"] = bench_pass_line("pixel-8", bench_curve)
    print(json.dumps(out))
    '''
)
RAIL = [4.0, 6.0, 5.0, 7.0, 3.0, 5.5]


def test_a_figure_added_in_one_catalogue_row_reaches_every_output(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path / "h.sqlite"), ",".join(map(str, RAIL))],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    median = statistics.median(RAIL)

    report = json.loads(out["json"])  # report.json: the device's figure, its interval, every sample's value
    [device] = report["devices"]
    assert device["rail_mj_per_token_p50"] == median
    lo, hi = device["intervals"]["rail_mj_per_token_p50"]
    assert lo <= median <= hi
    assert [s["cells"]["pixel-8"]["rail_mj_per_token"] for s in report["samples"]] == RAIL

    assert "Rail energy/token p50 5.25 mJ" in out["html"]  # the details line under the device table
    assert "<th>Rail energy/token mJ</th>" in out["html"]  # the drill-down's column
    assert "Rail energy/token p50 (mJ)" in out["md"]  # the wide table

    rows = list(csv.DictReader(io.StringIO(out["csv"])))  # the export: per sample and per device
    assert [float(r["rail_mj_per_token"]) for r in rows] == RAIL
    assert {float(r["device_rail_mj_per_token_p50"]) for r in rows} == {median}

    value, lo, hi = out["history_figures"]["rail_mj_per_token_p50"]  # the results database, read back
    assert value == median and lo <= value <= hi
    assert out["history_samples"] == RAIL  # each sample's value, kept for `compare --baseline last`
    assert "Rail energy/token p50 (mJ)" in out["history_md"] and "5.25 (" in out["history_md"]

    cell = out["bench_cell"]["rail_mj_per_token"]  # bench: mean and sd over the repetitions
    assert cell["samples"] == RAIL and abs(cell["mean"] - statistics.mean(RAIL)) < 1e-9
    tg = next(r for r in out["bench_rows"] if r["test"].startswith("tg"))
    assert abs(tg["rail_mj_per_token"] - statistics.mean(RAIL)) < 1e-9
    assert abs(tg["rail_mj_per_token_sd"] - statistics.stdev(RAIL)) < 1e-9
    assert "Rail energy/token mJ" in out["bench_md"] and f"{statistics.mean(RAIL):.2f}" in out["bench_md"]
    assert "rail_mj_per_token,rail_mj_per_token_sd" in out["bench_csv"].splitlines()[0]

    # --sustain (run): the pass's median in report.json's curve, a column of its table, a panel of its chart
    assert [p["rail_mj_per_token"] for p in out["sustain_curve"]["passes"]] == RAIL[:2]
    assert "| Rail energy/token (mJ) |" in out["sustain_md"]
    assert f"| pixel-8 | 2 | 0.1 | 50 | 100 | 20 | {RAIL[1]:.1f} |" in out["sustain_md"]
    assert "Rail energy/token (% of pass 1)" in out["sustain_chart"]
    # --sustain (bench): each cell against its own pass 1, in bench.json, the table and the summary line
    pct = 100.0 * RAIL[1] / RAIL[0]
    assert out["bench_passes"]["passes"][1]["pct_of_first"]["rail_mj_per_token"] == round(pct, 2)
    assert "Rail energy/token % of pass 1" in out["bench_pass_headers"]
    rail_column = out["bench_pass_headers"].index("Rail energy/token % of pass 1")
    assert out["bench_pass_table"][1][rail_column] == f"{pct:.1f}"
    assert f"rail energy/token {pct:.0f}%" in out["bench_pass_line"]
