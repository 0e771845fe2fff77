"""Measurement discipline through the real CLI on this host: `--warmup K` runs and drops K samples,
`--repeat N` runs every sample N times (latency figures over every run, the first answer scored), and
`edgefarm report --merge` joins runs of several controllers after checking they evaluated the same."""

from __future__ import annotations

import json

from orchestrator.report.combine import percentile

from .conftest import device_json, edgefarm, results, run_json


def _lines(path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_repeat_and_warmup_keep_first_answers_and_report_distributions_over_every_run(run_here):
    ran = run_here("--limit", "4", "--repeat", "3", "--warmup", "2", "--max-output-tokens", "8")
    assert ran.proc.returncode == 0, ran.proc.stderr[-3000:]
    dev = ran.run_dir / "devices" / "this-host"
    first = results(ran.run_dir)
    ids = [r["id"] for r in first]
    assert len(ids) == 4 and all("@" not in i for i in ids)  # one scored row per sample, its first run
    repeats, warm = _lines(dev / "repeats.jsonl"), _lines(dev / "warmup.jsonl")
    assert sorted(r["id"] for r in repeats) == sorted(f"{i}@r{k}" for i in ids for k in (2, 3))
    assert [r["id"] for r in warm] == [f"{ids[0]}@warmup1", f"{ids[1]}@warmup2"]
    assert all(r["status"] == "ok" for r in first + repeats + warm)
    scored = device_json(ran.run_dir, "report.json")
    assert scored["summary"]["total_scored"] == 4  # repeats and warm-ups are never scored

    row = run_json(ran.run_dir)["devices"][0]
    assert row["samples"] == 4
    assert row["figures_over"] == "12 runs: 4 samples x 3 (first run scored); 2 warm-up run(s) not counted"
    every = [r["ttft_ms"] for r in first + repeats if r.get("ttft_ms") is not None]
    assert row["ttft_ms_p50"] == percentile(every, 50)  # over all 12 runs, warm-ups left out
    assert row["ttft_ms_p90"] == percentile(every, 90)
    flags = run_json(ran.run_dir)["stamp"]["flags"]
    assert flags["repeat"] == 3 and flags["warmup"] == 2
    md = (ran.run_dir / "report.md").read_text()
    assert "Figures over" in md and "12 runs" in md
    assert "figures over 12 runs: 4 samples x 3" in ran.proc.stdout  # the terminal table says it too


def test_merge_joins_two_controllers_runs_and_refuses_runs_of_another_selection(run_here, tmp_path):
    a = run_here("--limit", "3", "--max-output-tokens", "8", out=tmp_path / "site-a")
    b = run_here("--limit", "3", "--max-output-tokens", "8", out=tmp_path / "site-b")
    c = run_here("--limit", "2", "--max-output-tokens", "8", out=tmp_path / "site-c")
    for ran in (a, b, c):
        assert ran.proc.returncode == 0, ran.proc.stderr[-3000:]
    merged_dir = tmp_path / "merged"
    p = edgefarm(
        "report", "--merge", str(a.run_dir), str(b.run_dir), "--format", "json", "--out", str(merged_dir)
    )
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    names = [d["device"] for d in report["devices"]]
    assert len(names) == 2 and len(set(names)) == 2 and all(n.startswith("this-host@") for n in names)
    assert [s["id"] for s in report["samples"]] == [r["id"] for r in results(a.run_dir)]
    for s in report["samples"]:
        assert set(s["cells"]) == set(names)  # every sample has both controllers' answers
    assert [m["run_id"] for m in report["run"]["merged_from"]] == [a.run_dir.name, b.run_dir.name]
    assert json.loads((merged_dir / "report.json").read_text())["run_id"] == report["run_id"]
    assert (merged_dir / "report.md").is_file() and (merged_dir / "report.html").is_file()
    md = (merged_dir / "report.md").read_text()  # the header: each run's window, flags and host (issue 36)
    for ran in (a, b):
        own = run_json(ran.run_dir)["stamp"]
        line = next(x for x in md.splitlines() if x.startswith(f"- run {ran.run_dir.name}: "))
        # its own window (report.json's end may be the outcomes' time, run.json's a second later)
        assert f"{own['started_at']} → 20" in line and "max_output_tokens=8" in line, line
        assert "host " in line and "devices this-host@" in line, line

    bad = edgefarm("report", "--merge", str(a.run_dir), str(c.run_dir))
    assert bad.returncode == 2
    assert (
        "dataset slice: 3 samples" in bad.stderr
        and "2 samples" in bad.stderr
        and c.run_dir.name in bad.stderr
    )
    alone = edgefarm("report", str(a.run_dir), str(b.run_dir))
    assert alone.returncode == 2 and "--merge" in alone.stderr
