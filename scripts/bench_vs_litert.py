#!/usr/bin/env python3
"""`edgefarm bench` against LiteRT-LM's own `litert_lm.Benchmark` on this host: same model, backend,
threads and shape; paired repetitions, the order turned every pair.

    flock /tmp/edgefarm-bench.lock flock /tmp/edgefarm-lab.lock \\
        .venv/bin/python scripts/bench_vs_litert.py [--pairs 300] [--cli-pairs 20] [-p 1024] [-n 256]
            [--threads N] [--model M] [--depths 0,512,1024,1536|none] [--json]
            [--fresh-pairs 20 --shapes 64x64,256x32,16x128 --reps 5]

The claim (issue 32): edgefarm's prefill and decode tokens/s are LiteRT-LM's own, within 2% (median
of the paired ratios): the runner adds nothing to what it measures.

Fresh processes as a user compares them (`--fresh-pairs`, issue 41; `--pairs 0 --cli-pairs 0 --depths
none` runs only this), per shape and per thread setting (`--threads N` on both sides, then each side at
its own default), pairs in alternating order:
- `edgefarm bench --devices local --model M -p P -n N -r R -o jsonl [--threads N]`: the median of the
  pp row's and of the tg row's `samples_ts`, and the rows' `n_threads`;
- a fresh `python -c` running `litert_lm.Benchmark(model_path=M, backend=litert_lm.Backend.CPU(), prefill_tokens=P,
  decode_tokens=N).run()` (thread_count=N when stated) once as a warm-up, then R times: the median.
Per pair the ratio edgefarm / Benchmark of those medians; per (shape, threads) the median ratio with a
95% percentile-bootstrap interval (orchestrator.stats.bootstrap_ci), and whether it is within 5%.

In-process pairs (`--pairs`, cheap: a fresh engine per arm, ~0.1 s each), three arms per pair in a
turning order:
- `benchmark`: `litert_lm.Benchmark(model, CPU, prefill_tokens=p, decode_tokens=n).run()` with its
  default prompt (3 words, which the runtime pads with token 0 to p);
- `edgefarm`: the runner's own bench code (android_runner/bench.py: a fresh `BenchEngine`, one
  `run_cell` with the runner's memory sampler as the bench runner has it: no thread), as one
  repetition of `edgefarm bench -r 1`;
- `benchmark_text`: `litert_lm.Benchmark` again, given edgefarm's prompt text (p real tokens, which it
  cuts to p): whether the prompt (real tokens against 3 words padded with token 0) moves the
  runtime's own figure apart from the runner (it does not: docs/bench.md).
Each figure is the runtime's own per-turn speed (BenchmarkInfo) of a fresh engine's first session.

End-to-end pairs (`--cli-pairs`, ~3 s each): the `edgefarm bench` command (its runner process and
everything around it) against `litert_lm.Benchmark` in a fresh Python process, each a fresh engine.

Per comparison: the median of the paired ratios with its distribution-free 95% interval (two order
statistics, orchestrator.stats.median_order_ci). Also decode speed against depth (`--depths`, one
`edgefarm bench -p 64 -d ...`), to say whether the model is large enough to show it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
MODEL = REPO / "data" / "models" / "tiny-text.litertlm"

from orchestrator.stats import bootstrap_ci, median_order_ci, percentile_stat

MAX_PAIRS, MAX_CLI_PAIRS, MAX_REPS = 2000, 200, 100
FRESH_SHAPES = "64x64,256x32,16x128"  # issue 41's (p, n)
MAX_PROMPT, MAX_GEN, MAX_THREADS = 131072, 16384, 256  # `edgefarm bench`'s own bounds (docs/bench.md)
ARMS = ("benchmark", "edgefarm", "benchmark_text")
# (ratio name, numerator arm, denominator arm)
COMPARISONS = (
    ("edgefarm / benchmark", "edgefarm", "benchmark"),
    ("edgefarm / benchmark_text", "edgefarm", "benchmark_text"),
    ("benchmark_text / benchmark", "benchmark_text", "benchmark"),
)
Speeds = tuple[float, float]  # prefill, decode tokens/s


def bounded(lo: int, hi: int) -> Callable[[str], int]:
    def parse(s: str) -> int:
        v = int(s)
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{v} is not in {lo}..{hi}")
        return v

    return parse


@contextmanager
def runtime_log_to(path: Path) -> Iterator[TextIO]:
    """The runtime's own log lines (fd 2, several per engine) go to `path`; the yielded stream is the
    terminal's stderr, for progress."""
    saved = os.dup(2)
    with open(path, "ab") as log:
        os.dup2(log.fileno(), 2)
    try:
        with os.fdopen(os.dup(saved), "w", buffering=1) as terminal:
            yield terminal
    finally:
        os.dup2(saved, 2)
        os.close(saved)


class InProcessArms:
    """The three arms of an in-process pair, each a fresh engine."""

    def __init__(self, model: Path, p: int, n: int, threads: int | None, cache: Path) -> None:
        import litert_lm as lm

        from android_runner.bench import BenchCell, BenchTexts

        self.lm, self.model, self.cache = lm, str(model), str(cache)
        self.p, self.n, self.threads = p, n, threads
        self.cell = BenchCell(n_prompt=p, n_gen=n, n_depth=0, backend="cpu", threads=threads)
        self.texts = BenchTexts()
        engine = self._engine()
        try:  # the runner's own prompt text of exactly p tokens (start token included)
            self.text = self.texts.text(engine, p - engine.first_extra)
        finally:
            engine.close()

    def _engine(self):  # -> android_runner.bench.BenchEngine
        from android_runner.bench import BenchEngine

        return BenchEngine(self.model, self.cell, self.cache, None)

    def benchmark(self, prompt: str | None) -> Speeds:
        lm = self.lm
        extra = {"prompt": prompt} if prompt is not None else {}
        info = lm.Benchmark(model_path=self.model, backend=lm.Backend.CPU(thread_count=self.threads),
                            prefill_tokens=self.p, decode_tokens=self.n, cache_dir=self.cache, **extra).run()  # fmt: skip
        counts = (info.last_prefill_token_count, info.last_decode_token_count)
        if counts != (self.p, self.n):
            raise SystemExit(
                f"litert_lm.Benchmark processed {counts[0]}/{counts[1]} tokens, asked {self.p}/{self.n}"
            )
        return info.last_prefill_tokens_per_second, info.last_decode_tokens_per_second

    def edgefarm(self) -> Speeds:
        from android_runner.bench import run_cell
        from android_runner.memory import MemorySampler
        from android_runner.status import Status

        memory = MemorySampler()  # as the bench runner's: never started (readings at the turns' edges)
        engine = self._engine()
        try:
            r = run_cell(engine, self.texts, self.cell, memory, None, {"id": "pair", "status": Status.OK})
        finally:
            engine.close()
        if r.status != Status.OK or (r.prefill_tokens, r.decode_tokens) != (self.p, self.n):
            raise SystemExit(
                f"edgefarm's run_cell: {r.status} {r.error} ({r.prefill_tokens}/{r.decode_tokens} tokens)"
            )
        return float(r.prefill_tps), float(r.decode_tps)

    def run(self, arm: str) -> Speeds:
        if arm == "edgefarm":
            return self.edgefarm()
        return self.benchmark(self.text if arm == "benchmark_text" else None)


def litert_benchmark_process(model: Path, p: int, n: int, threads: int | None, cache: Path) -> Speeds:
    """One run of the package's own Benchmark in a fresh Python process (as edgefarm's runner is)."""
    code = (
        "import json,sys,litert_lm as lm\n"
        "a=json.loads(sys.argv[1])\n"
        "i=lm.Benchmark(model_path=a['m'],backend=lm.Backend.CPU(thread_count=a['t']),prefill_tokens=a['p'],"
        "decode_tokens=a['n'],cache_dir=a['c']).run()\n"
        "print(json.dumps([i.last_prefill_tokens_per_second,i.last_decode_tokens_per_second,"
        "i.last_prefill_token_count,i.last_decode_token_count]))\n"
    )
    arg = json.dumps({"m": str(model), "p": p, "n": n, "t": threads, "c": str(cache)})
    out = subprocess.run(
        [sys.executable, "-c", code, arg], capture_output=True, text=True, check=True, timeout=600
    )
    pre, dec, pn, dn = json.loads(out.stdout.strip().splitlines()[-1])
    if (pn, dn) != (p, n):
        raise SystemExit(f"litert_lm.Benchmark processed {pn}/{dn} tokens, asked {p}/{n}")
    return pre, dec


def edgefarm_bench(model: Path, work: Path, flags: list[str], fmt: str = "json") -> list[dict]:
    """`edgefarm bench --devices local` with `flags`; its JSON rows (`-o json` or `jsonl`)."""
    inv = work / "devices.yaml"
    inv.write_text(
        json.dumps({"devices": [{"name": "this-host", "kind": "local", "workdir": str(work / "w")}]})
    )
    env = {**os.environ, "EDGEFARM_CACHE_DIR": str(work / "cache")}
    env.pop("EDGEFARM_INVENTORY", None)
    out = subprocess.run(
        [sys.executable, "-m", "orchestrator", "bench", "--devices", "local", "--inventory", str(inv),
         "--out", str(work / "runs"), "--model", str(model), "--db", "none", "-o", fmt, *flags],
        capture_output=True, text=True, cwd=REPO, env=env, check=False, timeout=1800,
    )  # fmt: skip
    if out.returncode:
        raise SystemExit(f"edgefarm bench failed ({out.returncode}):\n{out.stderr[-3000:]}")
    if fmt == "jsonl":
        return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    return json.loads(out.stdout)


def cli_speeds(rows: list[dict]) -> Speeds:
    pp = next(r for r in rows if r["test"].startswith("pp"))
    tg = next(r for r in rows if r["test"].startswith("tg"))
    return pp["avg_ts"], tg["avg_ts"]


def benchmark_process_median(model: Path, p: int, n: int, threads: int | None, reps: int) -> Speeds:
    """`litert_lm.Benchmark` as a user runs it: a fresh Python process, one run as a warm-up, then
    `reps` runs (each its own fresh engine, as Benchmark makes one); the medians of their speeds."""
    code = (
        "import json,statistics,sys,litert_lm as lm\n"
        "a=json.loads(sys.argv[1])\n"
        "cpu=lm.Backend.CPU(thread_count=a['t']) if a['t'] else lm.Backend.CPU()\n"
        "runs=[lm.Benchmark(model_path=a['m'],backend=cpu,prefill_tokens=a['p'],decode_tokens=a['n']).run()"
        " for _ in range(a['r']+1)][1:]\n"
        "assert all((i.last_prefill_token_count,i.last_decode_token_count)==(a['p'],a['n']) for i in runs)\n"
        "print(json.dumps([statistics.median(i.last_prefill_tokens_per_second for i in runs),"
        "statistics.median(i.last_decode_tokens_per_second for i in runs)]))\n"
    )
    arg = json.dumps({"m": str(model), "p": p, "n": n, "t": threads, "r": reps})
    out = subprocess.run([sys.executable, "-c", code, arg], capture_output=True, text=True, check=False,
                         timeout=600)  # fmt: skip
    if out.returncode:
        raise SystemExit(f"litert_lm.Benchmark process failed ({out.returncode}):\n{out.stderr[-3000:]}")
    pre, dec = json.loads(out.stdout.strip().splitlines()[-1])
    return pre, dec


def edgefarm_bench_median(model: Path, work: Path, p: int, n: int, threads: int | None, reps: int) -> tuple:
    """`edgefarm bench --devices local ... -o jsonl` in a fresh process (the user's command): the
    medians of the pp and tg rows' samples_ts, and the rows' n_threads and how it is known."""
    flags = ["-p", str(p), "-n", str(n), "-r", str(reps)] + (["--threads", str(threads)] if threads else [])
    rows = edgefarm_bench(model, work, flags, fmt="jsonl")
    pp = next(r for r in rows if r["test"].startswith("pp"))
    tg = next(r for r in rows if r["test"].startswith("tg"))
    if pp["errors"] or tg["errors"] or len(tg["samples_ts"]) != reps:
        raise SystemExit(f"edgefarm bench: {pp['errors']} / {tg['errors']} failed repetitions")
    speeds = (statistics.median(pp["samples_ts"]), statistics.median(tg["samples_ts"]))
    return speeds, (tg["n_threads"], tg["n_threads_from"])


def fresh_processes(model: Path, work: Path, shapes: list[tuple[int, int]], threads: int, pairs: int,
                    reps: int, terminal: TextIO) -> list[dict]:  # fmt: skip
    """Per shape and thread setting (stated on both sides, then each side's default): `pairs`
    alternating pairs of the two fresh processes; each pair's ratio of medians."""
    out = []
    for p, n in shapes:
        for t in (threads, None):
            got = []
            for i in range(pairs):
                order = ("benchmark", "edgefarm") if i % 2 == 0 else ("edgefarm", "benchmark")
                pair: dict = {}
                for who in order:
                    if who == "benchmark":
                        pair["benchmark"] = benchmark_process_median(model, p, n, t, reps)
                    else:
                        pair["edgefarm"], pair["n_threads"] = edgefarm_bench_median(
                            model, work, p, n, t, reps
                        )
                got.append(pair)
            ratios = {k: [x["edgefarm"][j] / x["benchmark"][j] for x in got] for j, k in enumerate(SPEEDS)}
            entry = {"p": p, "n": n, "threads": t or "default", "pairs": pairs, "reps": reps,
                     "n_threads": sorted({tuple(x["n_threads"]) for x in got}),
                     "median_tps": {who: {k: statistics.median(x[who][j] for x in got) for j, k in enumerate(SPEEDS)}
                                    for who in ("edgefarm", "benchmark")}}  # fmt: skip
            for k, rs in ratios.items():
                ci = bootstrap_ci(rs, percentile_stat(50))
                entry[k] = {"median": statistics.median(rs), "ci95": list(ci) if ci else None,
                            "range": [min(rs), max(rs)], "raw": rs}  # fmt: skip
            out.append(entry)
            print(f"fresh processes p{p} n{n} threads {t or 'default'}: prefill {entry['prefill']['median']:.3f}, "
                  f"decode {entry['decode']['median']:.3f}", file=terminal)  # fmt: skip
    return out


SPEEDS = ("prefill", "decode")


def summarize(pairs: list[dict[str, Speeds]], comparisons: tuple[tuple[str, str, str], ...]) -> dict:
    out: dict = {"pairs": len(pairs), "median_tps": {}, "ratios": {}}
    for arm in pairs[0]:
        out["median_tps"][arm] = {
            k: statistics.median(p[arm][j] for p in pairs) for j, k in enumerate(("prefill", "decode"))
        }
    for name, a, b in comparisons:
        out["ratios"][name] = {}
        for j, k in enumerate(("prefill", "decode")):
            rs = [p[a][j] / p[b][j] for p in pairs]
            ci = median_order_ci(rs)
            out["ratios"][name][k] = {
                "median": statistics.median(rs), "ci95": list(ci) if ci else None,
                "range": [min(rs), max(rs)],
            }  # fmt: skip
    return out


def verdict(r: dict) -> str:
    med, ci = r["median"], r["ci95"]
    if ci is None:
        return "too few pairs for an interval"
    if 0.98 <= ci[0] and ci[1] <= 1.02:
        return "within 2% (interval too)"
    where = "within" if abs(med - 1.0) <= 0.02 else "NOT within"
    return f"median {where} 2%; interval {'excludes' if ci[0] > 1 or ci[1] < 1 else 'holds'} 1"


def render(summary: dict, terminal: TextIO) -> None:
    for part in ("in_process", "cli"):
        s = summary.get(part)
        if not s:
            continue
        print(f"{part}: {s['pairs']} pairs, {summary['shape']}, medians t/s "
              + ", ".join(f"{a} {v['prefill']:.0f}/{v['decode']:.0f}" for a, v in s["median_tps"].items()),
              file=terminal)  # fmt: skip
        for name, by in s["ratios"].items():
            for k, r in by.items():
                lo, hi = r["ci95"] or (float("nan"), float("nan"))
                print(f"  {k:7s} {name:27s} {r['median']:.4f} ({(r['median'] - 1) * 100:+.2f}%; 95% {lo:.4f}-{hi:.4f})"
                      f"  pairs {r['range'][0]:.3f}..{r['range'][1]:.3f}  {verdict(r)}", file=terminal)  # fmt: skip
    for e in summary.get("fresh_processes", []):
        for k in SPEEDS:
            r = e[k]
            lo, hi = r["ci95"] or (float("nan"), float("nan"))
            within = "within 5%" if 0.95 <= r["median"] <= 1.05 else "NOT within 5%"
            print(f"fresh p{e['p']} n{e['n']} threads {e['threads']} (edgefarm n_threads {e['n_threads']}): {k:7s} "
                  f"edgefarm/Benchmark {r['median']:.3f} (95% {lo:.3f}-{hi:.3f}) pairs {r['range'][0]:.2f}..{r['range'][1]:.2f}"
                  f"  {within}; medians {e['median_tps']['edgefarm'][k]:.0f} / {e['median_tps']['benchmark'][k]:.0f} t/s",
                  file=terminal)  # fmt: skip
    for d in summary.get("decode_vs_depth", []):
        print(f"decode at depth {d['n_depth']}: {d['avg_ts']:.1f} t/s (95% {d['ci95'][0]:.1f}-{d['ci95'][1]:.1f})",
              file=terminal)  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--pairs", type=bounded(0, MAX_PAIRS), default=300, help=f"in-process pairs (0..{MAX_PAIRS})"
    )
    ap.add_argument("--fresh-pairs", type=bounded(0, MAX_CLI_PAIRS), default=0,
                    help=f"fresh-process pairs per shape and thread setting (0..{MAX_CLI_PAIRS})")  # fmt: skip
    ap.add_argument("--shapes", default=FRESH_SHAPES, help="fresh-process shapes, PxN[,PxN...]")
    ap.add_argument("--reps", type=bounded(1, MAX_REPS), default=5, help="-r of each fresh-process run")
    ap.add_argument("--cli-pairs", type=bounded(0, MAX_CLI_PAIRS), default=20,
                    help=f"end-to-end pairs: the edgefarm bench command (0..{MAX_CLI_PAIRS})")  # fmt: skip
    ap.add_argument("-p", type=bounded(1, MAX_PROMPT), default=1024, help="prompt tokens")
    ap.add_argument("-n", type=bounded(1, MAX_GEN), default=256, help="decoded tokens")
    ap.add_argument(
        "--threads", type=bounded(1, MAX_THREADS), default=None, help="CPU threads (runtime default)"
    )
    ap.add_argument("--model", type=Path, default=MODEL)
    ap.add_argument("--depths", default="0,512,1024,1536", help="decode-vs-depth sweep (-p 64), or none")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    import litert_lm as lm

    context = lm.ModelInfo(str(a.model)).max_context_tokens
    if a.p + a.n >= context:  # the runtime refuses a prefill reaching its token limit
        ap.error(
            f"-p {a.p} + -n {a.n} = {a.p + a.n} tokens does not fit {a.model.name}'s context of {context}"
        )
    summary: dict = {
        "model": str(a.model),
        "shape": f"p{a.p}-n{a.n}-d0",
        "threads": a.threads,
        "backend": "cpu",
    }
    with tempfile.TemporaryDirectory(prefix="bench-vs-litert-") as tmp:
        work = Path(tmp)
        cache = work / "lm-cache"  # the runtime's weight cache, shared by every arm as a runner keeps one
        cache.mkdir()
        with runtime_log_to(work / "runtime.log") as terminal:
            if a.fresh_pairs:
                shapes = [(int(x.split("x")[0]), int(x.split("x")[1])) for x in a.shapes.split(",")]
                warm = ["-p", "8", "-n", "4", "-r", "1"]
                edgefarm_bench(a.model, work, warm)  # untimed: the host's work folder filled once
                summary["fresh_processes"] = fresh_processes(a.model, work, shapes, a.threads or 1, a.fresh_pairs,
                                                             a.reps, terminal)  # fmt: skip
            if a.pairs:
                arms = InProcessArms(a.model, a.p, a.n, a.threads, cache)
                for arm in ARMS:  # untimed: caches filled, code paths touched once
                    arms.run(arm)
                orders = itertools.cycle(itertools.permutations(ARMS))  # each arm equally often in each place
                pairs = []
                for i in range(a.pairs):
                    order = next(orders)
                    pairs.append({arm: arms.run(arm) for arm in order})
                    if (i + 1) % 50 == 0 or i + 1 == a.pairs:
                        print(f"in-process pair {i + 1}/{a.pairs}", file=terminal)
                summary["in_process"] = summarize(pairs, COMPARISONS) | {"raw": pairs}
            flags = ["-p", str(a.p), "-n", str(a.n), "-d", "0", "-r", "1", "--backend", "cpu"]
            flags += ["--threads", str(a.threads)] if a.threads else []
            if a.cli_pairs:
                edgefarm_bench(a.model, work, flags)  # untimed: the host's work folder filled once
                cli = []
                for i in range(a.cli_pairs):
                    order = ("benchmark", "edgefarm") if i % 2 == 0 else ("edgefarm", "benchmark")
                    got = {}
                    for who in order:
                        got[who] = (litert_benchmark_process(a.model, a.p, a.n, a.threads, cache) if who == "benchmark"
                                    else cli_speeds(edgefarm_bench(a.model, work, flags)))  # fmt: skip
                    cli.append(got)
                    print(f"end-to-end pair {i + 1}/{a.cli_pairs}", file=terminal)
                summary["cli"] = summarize(cli, COMPARISONS[:1]) | {"raw": cli}
            if a.depths != "none" and a.pairs + a.cli_pairs:
                depth_flags = [
                    "-p",
                    "64",
                    "-n",
                    str(min(a.n, 128)),
                    "-d",
                    a.depths,
                    "-r",
                    "5",
                    "--backend",
                    "cpu",
                ]
                rows = [r for r in edgefarm_bench(a.model, work, depth_flags) if r["test"].startswith("tg")]
                summary["decode_vs_depth"] = [{"n_depth": r["n_depth"], "avg_ts": r["avg_ts"],
                                               "ci95": [r["ci95_lo_ts"], r["ci95_hi_ts"]]} for r in rows]  # fmt: skip
            if a.json:
                print(json.dumps(summary, indent=2))
            render(summary, terminal if a.json else sys.stdout)


if __name__ == "__main__":
    main()
