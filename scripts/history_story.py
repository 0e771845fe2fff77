"""Issue 41's history story on this host, end to end: ten identical `edgefarm run`s of the tiny model into
a fresh results database, some under a CPU hog, and ten more with a real 1.3x slowdown from run 6 on;
then what `edgefarm history` flags. Not a test (about 3 minutes); docs/history.md records its output.

Two series in one SQLite database, each a `kind: local` device of its own name on this host, both run
through the lab's faulty_runner.py (the real litert_lm runtime, the tiny bundled model) under its LATER
fault: each reply takes BASE_S longer, inside the sample's measured time. The tiny model answers in about
5 ms, a time this shared host's load moves by 2x (measured: 3.7-7.1 ms over ten identical runs); with the
wait a sample takes about 55 ms, most of it a device's own time as on a phone, whose figure a host's hog
does not touch (the adb lab story's fixed-time runner; tests/lab/local/test_history_judge_story.py).
- `steady`: ten identical runs; a busy-loop hog (a child of this script, bounded) on during runs HOG_RUNS.
  Done means: 0 changes flagged.
- `slowed`: the same ten runs and hog, but from run 6 on each reply waits longer, by 30% of the median
  time per sample its runs 1-5 measured (calibrated here: a real 1.3x slower device). Done means: a
  change flagged at run 6 only (not at 7-10, which confirm it).
The runs of the two series alternate (steady 1, slowed 1, steady 2, ...), so both meet the same host.

Run it alone: flock /tmp/edgefarm-bench.lock flock /tmp/edgefarm-lab.lock python scripts/history_story.py
Exit 0 when both done-means hold, 1 otherwise (the figures are printed either way)."""

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
FAULTY_RUNNER = REPO / "tests" / "lab" / "local" / "faulty_runner.py"  # the lab's stand-in around the real runtime
RUNS = 10
SLOW_FROM = 6  # the `slowed` series' first slow run
BASE_S = 0.05  # each reply's wait (faulty_runner.py LATER)
SLOWDOWN = 1.3
HOG_RUNS = (3, 4, 8)  # runs with a CPU hog beside them (both series)
HOG_S = 600  # the hog's own bound: it ends even if this script dies before stopping it
FIGURE = "sample_ms_p50"


def inventory(tmp: Path, device: str, faults: str) -> Path:
    """devices.yaml of one `kind: local` device whose runner runs under `faults` ('' for none)."""
    tag = faults.replace("=", "-") or "none"
    python = tmp / f"python-{tag}"
    python.write_text(f'#!/bin/sh\nEDGEFARM_TEST_FAULTS="{faults}" exec "{sys.executable}" "{FAULTY_RUNNER}" "$@"\n')
    python.chmod(0o755)
    inv = tmp / f"devices-{device}-{tag}.yaml"
    entry = {"name": device, "kind": "local", "workdir": str(tmp / f"w-{device}"), "python": str(python)}
    inv.write_text(json.dumps({"devices": [entry]}))
    return inv


def edgefarm(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200"}
    env.pop("EDGEFARM_INVENTORY", None)
    return subprocess.run([sys.executable, "-m", "orchestrator", *args], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=900, check=False)  # fmt: skip


def one_run(tmp: Path, db: Path, device: str, inv: Path, n: int, limit: int) -> dict:
    """One `edgefarm run` recording itself in `db`: its id, seconds, time per sample and `history:` lines."""
    out = tmp / f"runs-{device}-{n}"
    t0 = time.monotonic()
    p = edgefarm("run", "--devices", device, "--inventory", str(inv), "--out", str(out), "--modality", "text",
                 "--limit", str(limit), "--max-output-tokens", "16", "--db", str(db))  # fmt: skip
    if p.returncode != 0:
        sys.exit(f"run {n} of {device} exited {p.returncode}:\n{p.stderr[-3000:]}")
    (run_dir,) = [d for d in out.iterdir() if d.is_dir()]
    report = json.loads((run_dir / "report.json").read_text())
    (row,) = report["devices"]
    said = [x for x in p.stderr.splitlines() if x.startswith("history:")][1:]  # after "recorded in"
    return {"run_id": run_dir.name, "s": time.monotonic() - t0, "ms": row.get(FIGURE), "said": said}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=20, help="text samples per run (default 20)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="history-story-"))
    db = tmp / "history.sqlite"  # fresh
    normal = {d: inventory(tmp, d, f"LATER={BASE_S:g}") for d in ("steady", "slowed")}
    slow, later_s = None, None
    runs: dict[str, list[dict]] = {"steady": [], "slowed": []}
    loadavg = []
    for n in range(1, RUNS + 1):
        hog = None
        if n in HOG_RUNS:
            busy = f"import time\nend = time.monotonic() + {HOG_S}\nwhile time.monotonic() < end: pass"
            hog = subprocess.Popen([sys.executable, "-c", busy])
        if n == SLOW_FROM:  # 30% more of the time per sample runs 1-5 measured
            before = sorted(r["ms"] for r in runs["slowed"])[len(runs["slowed"]) // 2]
            later_s = round(BASE_S + (SLOWDOWN - 1) * before / 1000, 4)
            slow = inventory(tmp, "slowed", f"LATER={later_s:g}")
        try:
            for device in ("steady", "slowed"):
                inv = slow if device == "slowed" and n >= SLOW_FROM else normal[device]
                runs[device].append({**one_run(tmp, db, device, inv, n, args.limit), "hog": hog is not None})
        finally:
            if hog is not None:
                hog.kill()
                hog.wait(timeout=30)
        loadavg.append(os.getloadavg()[0])
    data = json.loads(edgefarm("history", "--db", str(db), "--format", "json").stdout)
    series = {s["device"]: s for s in data["series"]}
    ok = True
    print(f"history story: {RUNS} runs per series, --limit {args.limit} text samples, --max-output-tokens 16, "
          f"each reply +{BASE_S:g} s; hog on runs {', '.join(map(str, HOG_RUNS))}; `slowed` +{later_s:g} s from run "
          f"{SLOW_FROM} ({SLOWDOWN:g}x its runs 1-5's median time per sample); "
          f"load average after each round: {' '.join(f'{x:.1f}' for x in loadavg)}")  # fmt: skip
    for device, mine in runs.items():
        s = series[device]
        if len(s["points"]) != RUNS:
            print(f"{device}: {len(s['points'])} points in one series, {RUNS} runs made (the series split)")
            ok = False
        states = [j["state"] if j else "-" for j in s["judgements"].get(FIGURE, [])]
        conditions = [",".join(sorted({c.split(":")[0] for c in p["conditions"]})) for p in s["points"]]
        print(f"\n{device}: run | time/sample p50 ms | hog | conditions | judgement of time/sample | history said")
        for i, r in enumerate(mine):
            fault = " slower" if device == "slowed" and i + 1 >= SLOW_FROM else ""
            said = "; ".join(x.removeprefix("history: ") for x in r["said"]) or "-"
            print(f"  {i + 1:2d}{fault:>7} | {r['ms']:8.1f} | {'hog' if r['hog'] else '   '} | "
                  f"{conditions[i] if i < len(conditions) else '?':7} | {states[i] if i < len(states) else '?':9} | {said}")  # fmt: skip
        at = {r["run_id"]: i + 1 for i, r in enumerate(mine)}
        changes = [(at.get(c["run_id"]), c["figure"], round(c["value"] / c["mean"], 3), c["runs"], c["worse"])
                   for c in s["changes"]]  # fmt: skip
        print(f"  changes flagged (run, figure, ratio to the earlier runs' mean, runs it rests on, worse): {changes or 'none'}")
        flagged_runs = sorted({c[0] for c in changes})
        want = [] if device == "steady" else [SLOW_FROM]
        held = flagged_runs == want and (device == "steady" or any(c[1] == FIGURE and c[4] for c in changes))
        print(f"  done means {'0 changes' if device == 'steady' else f'flagged at run {SLOW_FROM} only'}: "
              f"{'HELD' if held else 'NOT HELD'} (flagged at runs {flagged_runs or 'none'})")
        ok = ok and held
    print(f"\nresults database: {db}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
