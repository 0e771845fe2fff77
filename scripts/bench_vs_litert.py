#!/usr/bin/env python3
"""`edgefarm bench` against LiteRT-LM's own `litert_lm.Benchmark` on this host: same model, backend,
shape; paired repetitions, alternating which goes first.

    flock /tmp/edgefarm-bench.lock flock /tmp/edgefarm-lab.lock \
        python scripts/bench_vs_litert.py [--pairs 10] [-p 1024] [-n 256] [--model M] [--threads N] [--json]

Each pair: one `litert_lm.Benchmark(model, CPU, prefill_tokens=p, decode_tokens=n).run()` (a fresh
engine, its prompt padded to p tokens, n decoded) and one `edgefarm bench --devices local -p p -n n -d 0
-r 1` (a fresh runner and engine, the same shape), each figure the runtime's own per-turn speed. The
ratio per pair is edgefarm / Benchmark; the claim is the median ratio within 2% of 1 for prefill and
decode ("the runner adds nothing to what it measures"). Also: decode speed against depth on the same
model (`-d 0,512,1024,1536`), to say whether the model is large enough to show it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
MODEL = REPO / "data" / "models" / "tiny-text.litertlm"

from orchestrator.stats import bootstrap_ci, percentile_stat


def litert_benchmark(model: Path, p: int, n: int, threads: int | None, cache: str) -> tuple[float, float]:
    """One run of the package's own Benchmark in a child process (a fresh process, as edgefarm's runner)."""
    code = (
        "import json,sys,litert_lm as lm\n"
        "a=json.loads(sys.argv[1])\n"
        "b=lm.Benchmark(model_path=a['m'],backend=lm.Backend.CPU(thread_count=a['t']),prefill_tokens=a['p'],"
        "decode_tokens=a['n'],cache_dir=a['c'])\n"
        "i=b.run()\n"
        "print(json.dumps([i.last_prefill_tokens_per_second,i.last_decode_tokens_per_second,"
        "i.last_prefill_token_count,i.last_decode_token_count]))\n"
    )
    arg = json.dumps({"m": str(model), "p": p, "n": n, "t": threads, "c": cache})
    out = subprocess.run(
        [sys.executable, "-c", code, arg], capture_output=True, text=True, check=True, timeout=600
    )
    pre, dec, pn, dn = json.loads(out.stdout.strip().splitlines()[-1])
    if (pn, dn) != (p, n):
        raise SystemExit(f"litert_lm.Benchmark processed {pn}/{dn} tokens, asked {p}/{n}")
    return pre, dec


def edgefarm_bench(model: Path, work: Path, flags: list[str]) -> list[dict]:
    inv = work / "devices.yaml"
    inv.write_text(
        json.dumps({"devices": [{"name": "this-host", "kind": "local", "workdir": str(work / "w")}]})
    )
    env = {**os.environ, "EDGEFARM_CACHE_DIR": str(work / "cache")}
    env.pop("EDGEFARM_INVENTORY", None)
    out = subprocess.run(
        [sys.executable, "-m", "orchestrator", "bench", "--devices", "local", "--inventory", str(inv),
         "--out", str(work / "runs"), "--model", str(model), "-o", "json", *flags],
        capture_output=True, text=True, cwd=REPO, env=env, check=False, timeout=1800,
    )  # fmt: skip
    if out.returncode:
        raise SystemExit(f"edgefarm bench failed ({out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=10)
    ap.add_argument("-p", type=int, default=1024)
    ap.add_argument("-n", type=int, default=256)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--model", type=Path, default=MODEL)
    ap.add_argument("--depths", default="0,512,1024,1536")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    pairs = []
    with tempfile.TemporaryDirectory(prefix="bench-vs-litert-") as tmp:
        work = Path(tmp)
        flags = ["-p", str(a.p), "-n", str(a.n), "-d", "0", "-r", "1"]
        flags += ["--threads", str(a.threads)] if a.threads else []
        lm_cache = work / "lm-cache"  # the runtime's weight cache, as edgefarm's runner keeps one
        lm_cache.mkdir()
        edgefarm_bench(a.model, work, flags)  # untimed: the host's work folder and caches filled once
        litert_benchmark(a.model, a.p, a.n, a.threads, str(lm_cache))  # and Benchmark's cache
        for i in range(a.pairs):
            order = ("lm", "ef") if i % 2 == 0 else ("ef", "lm")
            got = {}
            for who in order:
                if who == "lm":
                    got["lm"] = litert_benchmark(a.model, a.p, a.n, a.threads, str(lm_cache))
                else:
                    rows = edgefarm_bench(a.model, work, flags)
                    pp = next(r for r in rows if r["test"].startswith("pp"))
                    tg = next(r for r in rows if r["test"].startswith("tg"))
                    got["ef"] = (pp["avg_ts"], tg["avg_ts"])
            pairs.append(got)
            print(f"pair {i + 1}: prefill edgefarm {got['ef'][0]:.1f} / Benchmark {got['lm'][0]:.1f} t/s, "
                  f"decode {got['ef'][1]:.1f} / {got['lm'][1]:.1f} t/s", file=sys.stderr)  # fmt: skip
        depth_flags = ["-p", "64", "-n", str(min(a.n, 128)), "-d", a.depths, "-r", "5"]
        depth_rows = [r for r in edgefarm_bench(a.model, work, depth_flags) if r["test"].startswith("tg")]
    ratios = {k: [p["ef"][j] / p["lm"][j] for p in pairs] for j, k in enumerate(("prefill", "decode"))}
    median_ci = {k: bootstrap_ci(v, percentile_stat(50)) for k, v in ratios.items()}
    summary = {
        "model": str(a.model), "shape": f"p{a.p}-n{a.n}-d0", "threads": a.threads, "pairs": len(pairs),
        "median_ratio": {k: statistics.median(v) for k, v in ratios.items()},
        "median_ratio_ci95": median_ci,
        "ratios": ratios, "raw": pairs,
        "decode_vs_depth": [{"n_depth": r["n_depth"], "avg_ts": r["avg_ts"], "ci95": [r["ci95_lo_ts"], r["ci95_hi_ts"]]}
                            for r in depth_rows],
    }  # fmt: skip
    if a.json:
        print(json.dumps(summary, indent=2))
        return
    for k, v in ratios.items():
        med = statistics.median(v)
        ci = median_ci[k] or (math.nan, math.nan)
        print(f"{k}: median edgefarm/Benchmark {med:.4f} ({(med - 1) * 100:+.2f}%; 95% {ci[0]:.3f}-{ci[1]:.3f}), "
              f"pairs {min(v):.3f}..{max(v):.3f}"
              f" -> {'within' if abs(med - 1) <= 0.02 else 'NOT within'} 2%")  # fmt: skip
    for d in summary["decode_vs_depth"]:
        print(
            f"decode at depth {d['n_depth']}: {d['avg_ts']:.1f} t/s (95% {d['ci95'][0]:.1f}-{d['ci95'][1]:.1f})"
        )


if __name__ == "__main__":
    main()
