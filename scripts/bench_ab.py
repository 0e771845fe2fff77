#!/usr/bin/env python3
"""`edgefarm ab` on this host: can it tell a 10% slower runtime from none, and does it say so?

    flock /tmp/edgefarm-bench.lock flock /tmp/edgefarm-lab.lock \\
        python scripts/bench_ab.py [--rounds 6] [--resolve PCT] [--block-s 0,2] [--slower 0.1] [--load 0] [--json]

One `kind: local` device over the canned set (the tiny model's eight canned prompts: text, image,
audio, multi-turn; the real runtime), `--max-output-tokens 16`, `--fail-on regression`. For each
--block-s (0: one pass per block, as ab was before --block-s), two runs of `edgefarm ab`:
1. identical configurations, with --hogs busy-loop CPU hogs switched on once half the blocks are
   done (the machine's load changes mid-measurement): expected exit 0, no significant difference;
2. B a runtime --slower slower (tests/lab/local/faulty_runner.py SLOWER: each reply takes that
   fraction longer, inside the sample's measured wall time): expected exit 8, the interval clear of 1.
--rounds and --resolve are ab's (with --resolve, --rounds is the most; the hogs then start after
--hogs-after blocks). --load N keeps N more busy loops running through every run (a loaded CI
machine). Printed per ab
run: the time-per-sample ratio B/A with its interval, the smallest difference the run resolves
(half the interval), the per-round ratios, ab's exit code, the repeat it chose and the run's wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.lab.local.test_ab import ab_lab

HOG = [sys.executable, "-c", "while True: pass"]


def _blocks_done(out: Path) -> int:
    return sum(1 for side in ("a", "b") if (out / side).is_dir() for p in (out / side).iterdir()
               if (p / "report.json").is_file())  # fmt: skip


def _ab(
    root: Path,
    ds: Path,
    out: Path,
    b: str,
    rounds: int,
    resolve: float | None,
    block_s: float,
    hogs: tuple[int, int],
) -> dict:
    """One `edgefarm ab` of plain.yaml against `b`; `hogs`: (how many CPU hogs, after how many blocks)."""
    argv = [sys.executable, "-m", "orchestrator", "ab", "--a", f"--inventory {root / 'plain.yaml'}",
            "--b", f"--inventory {root / b}", "--rounds", str(rounds), "--block-s", str(block_s),
            *(["--resolve", str(resolve)] if resolve else []),
            "--out", str(out), "--format", "json", "--fail-on", "regression", "--",
            "--devices", "cpu-a", "--dataset", str(ds), "--max-output-tokens", "16"]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "EDGEFARM_INVENTORY"}
    t0 = time.monotonic()
    proc = subprocess.Popen(
        argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    started: list[subprocess.Popen] = []
    try:
        if hogs[0]:
            while _blocks_done(out) < hogs[1] and proc.poll() is None:
                time.sleep(0.2)
            started = [subprocess.Popen(HOG) for _ in range(hogs[0])]
        stdout, stderr = proc.communicate()
    finally:
        _stop(started)
    wall_s = time.monotonic() - t0
    if not stdout.strip():
        raise SystemExit(f"edgefarm ab exited {proc.returncode} without a comparison:\n{stderr[-3000:]}")
    data = json.loads(stdout)
    (dev,) = data["devices"]
    f = dev["figures"]["wall_ms"]
    note = data["drift_note"].splitlines()
    chose = next(
        (x.split(": ", 1)[1] for x in stderr.splitlines() if x.startswith("edgefarm ab: each block")), ""
    )
    ran = int(note[0].split()[0])
    return {"exit": proc.returncode, "rounds_run": ran, "ratio": f["ratio"], "lo": f["lo"], "hi": f["hi"], "significant": f["significant"],
            "resolves_pct": round(100 * ((f["hi"] / f["lo"]) ** 0.5 - 1), 1), "by_round": note[-1], "blocks": chose,
            "wall_s": round(wall_s, 1)}  # fmt: skip


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.send_signal(signal.SIGKILL)
        p.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=6, help="ab's --rounds (with --resolve: the most)")
    ap.add_argument("--resolve", type=float, default=None, help="ab's --resolve PCT")
    ap.add_argument("--block-s", default="0,2", help="comma-separated --block-s values to run (0: one pass)")
    ap.add_argument("--slower", type=float, default=0.1, help="B's slowdown (0.1: 10%% slower)")
    ap.add_argument(
        "--hogs", type=int, default=2, help="CPU hogs switched on halfway through the identical run"
    )
    ap.add_argument(
        "--hogs-after", type=int, default=None, help="blocks before the hogs start (default: --rounds)"
    )
    ap.add_argument("--load", type=int, default=0, help="busy loops running through every ab run")
    ap.add_argument("--cases", default="identical,slower", help="which ab runs, in order: identical, slower")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not set(args.cases.split(",")) <= {"identical", "slower"}:
        ap.error(f"--cases {args.cases}: each one of identical, slower")
    rows = []
    background = [subprocess.Popen(HOG) for _ in range(args.load)]
    try:
        with tempfile.TemporaryDirectory(prefix="bench-ab-") as tmp:
            root = Path(tmp)
            ds = ab_lab(root, f"SLOWER={args.slower}")
            for block_s in (float(x) for x in args.block_s.split(",")):
                cases = {"identical": ("identical, hogs halfway", "plain.yaml", (args.hogs, args.hogs_after or args.rounds)),
                         "slower": (f"{100 * args.slower:g}% slower", "slower.yaml", (0, 0))}  # fmt: skip
                for case, b, hogs in (cases[c] for c in args.cases.split(",")):
                    out = root / f"ab-{block_s:g}-{b}"
                    r = _ab(root, ds, out, b, args.rounds, args.resolve, block_s, hogs)
                    rows.append(
                        {
                            "case": case,
                            "block_s": block_s,
                            "rounds": args.rounds,
                            "resolve": args.resolve,
                            "load": args.load,
                            **r,
                        }
                    )
                    if not args.json:
                        print(f"{case:24s} --block-s {block_s:<4g} {r['ratio']:.3f}x ({r['lo']:.3f}-{r['hi']:.3f}) "
                              f"resolves ±{r['resolves_pct']}% exit {r['exit']} after {r['rounds_run']} rounds in "
                              f"{r['wall_s']} s; {r['blocks']}\n"
                              f"    {r['by_round']}", flush=True)  # fmt: skip
    finally:
        _stop(background)
    if args.json:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
