#!/usr/bin/env python3
"""A full `edgefarm bench` grid on 4 lab phones + this host: the command's wall time against the sum
of the cells' device times (issue 32's closing figure).

    python scripts/bench_grid.py [-p 64,256] [-n 32] [-d 0,512] [-r 3] [--model PATH] [--json]

The device lab's emulated phones (real adb servers, mksh + toybox, edgefarm's native runner on the
real runtime's C API; tests/lab/adb), two per adb server, and this host (`kind: local`, the Python
runner), all in one `edgefarm bench --devices all` as a user types it, twice: `cold` (a fresh lab:
the model is pushed to every phone) and `warm` (the same command again: the model is on the phones).
Printed per run and device: its session's wall (outcome.json `wall_s`: device info, staging, engine
load, every cell, collecting), the model bytes pushed, its engine load (`init_ms`), the sum of its
rows' `wall_ms` (every repetition of every cell: depth fill, prefill, decode, as the runner timed it)
and its model loads; then the command's wall (start-up to exit) against the sum of every device's row
times (the work the grid holds) and against the longest session (what a farm running its devices at
once cannot go below). The lab's phones run on this host's CPU too: the 5 devices share 2 cores, so
this measures what the farm adds, not what 5 real devices would take.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.lab.adb.conftest import Lab, running_lab
from tests.lab.adb.sandbox import GALAXY_S24, PIXEL_8, REDMI_NOTE_13

TINY_TEXT = REPO / "data" / "models" / "tiny-text.litertlm"


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.is_file() else []


def one_bench(lab: Lab, work: Path, grid: list[str], model: Path, label: str) -> dict:
    inv = work / "devices.yaml"
    inv.write_text(json.dumps({
        "adb_servers": [f"127.0.0.1:{lab.servers[1].port}"],
        "devices": [{"name": "this-host", "kind": "local", "workdir": str(work / "host-work")}],
    }))  # fmt: skip
    out = work / f"runs-{label}"
    env = lab.env(COLUMNS="200")
    env.pop("EDGEFARM_INVENTORY", None)
    argv = [sys.executable, "-m", "orchestrator", "bench", "--devices", "all", "--inventory", str(inv),
            "--model", str(model), "--out", str(out), "--db", "none", "-o", "json", *grid]  # fmt: skip
    t0 = time.perf_counter()
    p = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, check=False, timeout=7200)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"bench failed ({p.returncode}):\n{p.stderr[-3000:]}")
    run_dir = next(d for d in out.iterdir() if d.is_dir())
    devices = {}
    for dev in sorted((run_dir / "devices").iterdir()):
        outcome = json.loads((dev / "outcome.json").read_text())
        rows = _jsonl(dev / "results.jsonl") + _jsonl(dev / "repeats.jsonl")
        devices[dev.name] = {
            "rows": len(rows),
            "model_bytes_pushed": outcome.get("model_push", {}).get("bytes_sent"),
            "init_ms": round(max((r.get("init_ms") or 0.0 for r in rows), default=0.0), 1),
            "ok": sum(r["status"] == "ok" for r in rows),
            "model_loads": outcome.get("model_loads"),
            "session_s": round(outcome["wall_s"], 2),
            "rows_s": round(sum(r.get("wall_ms") or 0.0 for r in rows) / 1000.0, 2),
        }
    rows_s = sum(d["rows_s"] for d in devices.values())
    longest = max(d["session_s"] for d in devices.values())
    return {"run": label, "grid": " ".join(grid), "command_wall_s": round(wall, 2), "devices": devices,
            "sum_rows_s": round(rows_s, 2), "sum_sessions_s": round(sum(d["session_s"] for d in devices.values()), 2),
            "longest_session_s": longest, "wall_over_sum_rows": round(wall / rows_s, 3) if rows_s else None,
            "wall_over_longest_session": round(wall / longest, 3) if longest else None}  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-p", default="64,256")
    ap.add_argument("-n", default="32")
    ap.add_argument("-d", default="0,512")
    ap.add_argument("-r", default="3")
    ap.add_argument("--model", type=Path, default=TINY_TEXT)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    grid = ["-p", args.p, "-n", args.n, "-d", args.d, "-r", args.r, "--backend", "cpu"]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        phones = [
            ("pixel8", PIXEL_8, 0),
            ("s24", GALAXY_S24, 0),
            ("redmi", REDMI_NOTE_13, 1),
            ("pixel8b", PIXEL_8, 1),
        ]
        with running_lab(work, phones) as lab:
            result = [one_bench(lab, work, grid, args.model, label) for label in ("cold", "warm")]
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    for run in result:
        print(f"{run['run']}: {run['grid']}")
        print(f"{'device':<28} {'rows':>5} {'ok':>4} {'loads':>6} {'pushed MB':>10} {'init ms':>8} "
              f"{'session s':>10} {'rows s':>8}")  # fmt: skip
        for name, d in run["devices"].items():
            mb = (d["model_bytes_pushed"] or 0) / 1e6
            print(f"{name:<28} {d['rows']:>5} {d['ok']:>4} {d['model_loads']:>6} {mb:>10.1f} {d['init_ms']:>8} "
                  f"{d['session_s']:>10} {d['rows_s']:>8}")  # fmt: skip
        print(f"command wall {run['command_wall_s']} s; sum of row times {run['sum_rows_s']} s "
              f"(wall / sum {run['wall_over_sum_rows']}); sum of sessions {run['sum_sessions_s']} s; "
              f"longest session {run['longest_session_s']} s (wall / longest {run['wall_over_longest_session']})")  # fmt: skip
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main())
