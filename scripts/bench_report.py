#!/usr/bin/env python3
"""Benchmark: build and render the combined report of a 16-device x 200-sample run.

One real run of the bundled 200-sample dataset on this host (`edgefarm run --devices local`), whose
device folder is then copied to N devices with each device's figures scaled and some answers changed
(so the charts, the drill-down and the disagreements have real work to do). Then, timed: rebuilding
the report from the folders (what `edgefarm report` does), the html's charts alone and each printer;
and the sizes.

    .venv/bin/python scripts/bench_report.py [--devices 16] [--run RUN_DIR] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from orchestrator.report.build import load_report
from orchestrator.report.charts import render_charts
from orchestrator.report.printers import PRINTERS


def real_run(out: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "orchestrator", "run", "--devices", "local", "--out", str(out)],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    return next(p for p in out.iterdir() if p.is_dir())


def fan_out(run_dir: Path, n: int, seed: int = 7) -> None:
    """Copy the one device folder to n devices: speeds scaled per device, a few answers changed."""
    run = json.loads((run_dir / "run.json").read_text())
    src = run_dir / "devices" / run["devices"][0]
    rnd = random.Random(seed)
    names = [f"phone-{i:02d}" for i in range(n)]
    for i, name in enumerate(names):
        dst = run_dir / "devices" / name
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("job", "raw"))
        speed = 0.5 + 1.5 * rnd.random()
        lines = []
        for line in (dst / "results.jsonl").read_text().splitlines():
            r = json.loads(line)
            for k in ("ttft_ms", "wall_ms", "infer_ms"):
                if r.get(k) is not None:
                    r[k] = round(r[k] / speed * (0.8 + 0.4 * rnd.random()), 3)
            for k in ("prefill_tps", "decode_tps"):
                if r.get(k) is not None:
                    r[k] = round(r[k] * speed * (0.8 + 0.4 * rnd.random()), 3)
            if r.get("status") == "ok" and rnd.random() < 0.03 * (i % 4):
                r["output"] = r["output"] + " (differs)"
            lines.append(json.dumps(r))
        (dst / "results.jsonl").write_text("\n".join(lines) + "\n")
        (dst / "device.json").write_text(
            json.dumps(
                {
                    "name": name,
                    "kind": "adb",
                    "manufacturer": "Lab",
                    "model": f"Phone {i % 5}",
                    "soc": f"soc-{i % 3}",
                }
            )
        )
        outcome = json.loads((dst / "outcome.json").read_text())
        (dst / "outcome.json").write_text(json.dumps({**outcome, "name": name}))
    shutil.rmtree(src)
    run["devices"] = names
    (run_dir / "run.json").write_text(json.dumps(run))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--devices", type=int, default=16)
    ap.add_argument("--run", type=Path, help="an existing one-device run folder (default: run one now)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = args.run or real_run(Path(tmp) / "runs")
        run_dir = Path(tmp) / "bench" / base.name
        shutil.copytree(base, run_dir)
        fan_out(run_dir, args.devices)
        t0 = time.perf_counter()
        cli = subprocess.run(
            [sys.executable, "-m", "orchestrator", "report", str(run_dir), "--format", "html"],
            cwd=REPO,
            check=True,
            capture_output=True,
        )
        cli_s = time.perf_counter() - t0
        best: dict[str, float] = {}
        first: dict[str, float] = {}
        cpu0, cpu_charts = time.process_time(), 0.0
        sizes: dict[str, int] = {}
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            report = load_report(run_dir)
            first.setdefault("load", time.perf_counter() - t0)
            best["load"] = min(best.get("load", 1e9), time.perf_counter() - t0)
            for fmt in ("json", "md", "html", "csv"):
                t0 = time.perf_counter()
                text = PRINTERS.get(fmt)(report)
                first.setdefault(fmt, time.perf_counter() - t0)
                best[fmt] = min(best.get(fmt, 1e9), time.perf_counter() - t0)
                sizes[fmt] = len(text.encode())
            t0, c0 = time.perf_counter(), time.process_time()
            charts = render_charts(report)  # the html's charts alone (html above drew them too)
            first.setdefault("charts", time.perf_counter() - t0)
            best["charts"] = min(best.get("charts", 1e9), time.perf_counter() - t0)
            sizes["charts"] = sum(len(svg.encode()) for _, _, svg in charts if svg)
            cpu_charts += time.process_time() - c0
        cpu_s = (time.process_time() - cpu0 - cpu_charts) / args.repeat  # less sensitive to a busy machine
        samples = len(report.samples)
        print(
            f"{len(report.devices)} devices x {samples} samples ({len(report.disagreements.samples)} disagree)"
        )
        print("           first    best   size")
        for k, v in best.items():
            size = f"  {sizes[k] / 1e6:.2f} MB" if k in sizes else ""
            print(f"  {k:6s} {first[k] * 1000:5.0f} ms {v * 1000:5.0f} ms{size}")
        total = sum(first[k] for k in ("load", "json", "md", "html"))
        print(f"  load + json + md + html, first time (imports included): {total:.2f} s")
        print(f"  CPU time per pass (load + json + md + html + csv, import amortised): {cpu_s:.2f} s")
        print(
            f"  `edgefarm report RUN --format html` (a new process, start-up included): {cli_s:.2f} s, "
            f"{len(cli.stdout) / 1e6:.2f} MB"
        )


if __name__ == "__main__":
    main()
