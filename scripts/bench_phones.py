#!/usr/bin/env python3
"""Phones: edgefarm's native runner (one model load per run) against the upstream binary (one per
sample), on the device lab's emulated phones (real adb servers, mksh + toybox, the real runtime).

    python scripts/bench_phones.py [--limit N] [--phones 2] [--json]

Runs the bundled dataset through `edgefarm run` once with each runner and prints, per phone: model
loads, wall time of the phone's session, and runner-side time per sample (the runner's own wall
time per sample, from its rows). The upstream stand-in is a Python program on the real runtime, so
its per-sample cost includes a Python start-up a real arm64 binary would not pay; the model loads
are exact either way. Needs the lab's tools (bubblewrap, mksh, toybox, a C compiler).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.lab.adb.conftest import Lab, running_lab
from tests.lab.adb.sandbox import GALAXY_S24, PIXEL_8


def one_run(lab: Lab, runner: str, limit: int | None, work: Path) -> dict:
    out = work / runner
    env = lab.env(EDGEFARM_PHONE_RUNNER=runner, COLUMNS="200")
    env.pop("EDGEFARM_INVENTORY", None)
    argv = [sys.executable, "-m", "orchestrator", "run", "--devices", "all", "--out", str(out)]
    if limit:
        argv += ["--limit", str(limit)]
    t0 = time.perf_counter()
    p = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, check=False, timeout=3600)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"{runner} run failed ({p.returncode}):\n{p.stderr[-3000:]}")
    run_dir = next(d for d in out.iterdir() if d.is_dir())
    phones = {}
    for dev in sorted((run_dir / "devices").iterdir()):
        outcome = json.loads((dev / "outcome.json").read_text())
        rows = [json.loads(x) for x in (dev / "results.jsonl").read_text().splitlines() if x.strip()]
        walls = [r["wall_ms"] for r in rows if r.get("wall_ms")]
        phones[dev.name] = {
            "samples": len(rows),
            "ok": sum(r["status"] == "ok" for r in rows),
            "model_loads": outcome.get("model_loads"),
            "session_s": round(outcome["wall_s"], 2),
            "runner_ms_per_sample_p50": round(statistics.median(walls), 1) if walls else None,
            "runner_ms_per_sample_mean": round(statistics.fmean(walls), 1) if walls else None,
        }
    return {"runner": runner, "command_wall_s": round(wall, 2), "phones": phones}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=None, help="first N samples (default: all 200)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        with running_lab(work, [("pixel8", PIXEL_8, 0), ("s24", GALAXY_S24, 0)]) as lab:
            runs = [one_run(lab, runner, args.limit, work) for runner in ("native", "upstream")]
    if args.json:
        print(json.dumps(runs, indent=2))
        return 0
    print(f"{'runner':<9} {'phone':<10} {'samples':>7} {'ok':>4} {'loads':>6} {'session s':>10} "
          f"{'ms/sample p50':>14} {'mean':>8}")  # fmt: skip
    for run in runs:
        for name, ph in run["phones"].items():
            print(f"{run['runner']:<9} {name:<10} {ph['samples']:>7} {ph['ok']:>4} {ph['model_loads']:>6} "
                  f"{ph['session_s']:>10} {ph['runner_ms_per_sample_p50']:>14} {ph['runner_ms_per_sample_mean']:>8}")  # fmt: skip
        print(f"{run['runner']:<9} whole command: {run['command_wall_s']} s")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main())
