#!/usr/bin/env python3
"""The extra time per sample of `edgefarm run --fidelity`: the Python runner on the bundled set, paired.

    python scripts/bench_fidelity.py [--rounds 5] [--max-output-tokens 32] [--json]

The runner (android_runner/entry.py, as a board or this host runs it) replays the same job bundle of
the bundled dataset (200 samples, tiny model) with and without the fidelity pass, rounds alternating
which goes first. Per sample, the row's own `wall_ms` (the whole sample on the device, the scoring pass
included) is paired between the two jobs of a round: the extra time is the median over samples of
the median over rounds of (with - without), with a bootstrap interval over samples, for the samples the
pass scores (one-turn text with a reference: a session, a prefill, the scoring) and for the others (the
answer is only tokenized). The pass's own `score_ms` from the rows is printed beside it.
Run alone: `flock /tmp/edgefarm-bench.lock flock /tmp/edgefarm-lab.lock python scripts/bench_fidelity.py`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from android_runner.contract import read_results
from android_runner.settings import SETTINGS_FILE, RunnerSettings
from orchestrator.bundled import BUNDLED_DATASET, BUNDLED_MODEL
from orchestrator.datasets import load_dataset
from orchestrator.jobs import JobOptions, write_bundle
from orchestrator.stats import bootstrap_ci, median

MAX_ROUNDS = 50


def run_job(job: Path) -> dict[str, dict]:
    """One runner process over the job; the rows by sample id."""
    out = job / "results.jsonl"
    out.unlink(missing_ok=True)
    settings = RunnerSettings(model=str(BUNDLED_MODEL), cache_dir=str(job / "cache"))  # as the host writes it
    (job / SETTINGS_FILE).write_text(settings.render(), encoding="utf-8")
    argv = [sys.executable, str(REPO / "android_runner" / "entry.py"), "--job", str(job)]
    p = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=1800)
    if p.returncode != 0:
        raise SystemExit(f"the runner failed ({p.returncode}): {p.stdout[-2000:]}")
    return {r.id: r for r in read_results(str(out))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help=f"paired rounds (1..{MAX_ROUNDS})")
    ap.add_argument("--max-output-tokens", type=int, default=32)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not 1 <= args.rounds <= MAX_ROUNDS:
        ap.error(f"--rounds must be in 1..{MAX_ROUNDS}")
    samples = load_dataset(str(BUNDLED_DATASET)).samples
    with tempfile.TemporaryDirectory() as tmp:
        jobs = {}
        for on in (False, True):
            folder = Path(tmp) / ("with" if on else "without")
            write_bundle(samples, folder, JobOptions(max_output_tokens=args.max_output_tokens, override=True,
                                                     fidelity=on))  # fmt: skip
            jobs[on] = folder
        run_job(jobs[True])  # untimed: the runtime's caches and the page cache warm
        deltas: dict[str, list[float]] = {}
        base_ms: dict[str, list[float]] = {}
        score_ms: dict[str, list[float]] = {}
        scored: set[str] = set()
        for k in range(args.rounds):
            order = (False, True) if k % 2 == 0 else (True, False)
            rows = {on: run_job(jobs[on]) for on in order}
            for sid, r in rows[True].items():
                base = rows[False].get(sid)
                if r.status != "ok" or base is None or base.status != "ok" or r.fidelity is None:
                    continue
                deltas.setdefault(sid, []).append(r.wall_ms - base.wall_ms)
                base_ms.setdefault(sid, []).append(base.wall_ms)
                score_ms.setdefault(sid, []).append(r.fidelity.score_ms)
                if r.fidelity.logp:
                    scored.add(sid)
    figures = {}
    for label, ids in (("scored", sorted(scored)), ("tokenized only", sorted(set(deltas) - scored))):
        per = [statistics.median(deltas[i]) for i in ids]
        own = [statistics.median(score_ms[i]) for i in ids]
        base = [statistics.median(base_ms[i]) for i in ids]
        figures[label] = {
            "samples": len(ids),
            "extra_ms_median": round(statistics.median(per), 3) if per else None,
            "extra_ms_ci": bootstrap_ci(per, median),
            "score_ms_median": round(statistics.median(own), 3) if own else None,
            "wall_ms_without_median": round(statistics.median(base), 3) if base else None,
        }
    if args.json:
        print(json.dumps({"rounds": args.rounds, **figures}))
    else:
        for label, f in figures.items():
            ci = f["extra_ms_ci"]
            ci_text = f" ({ci[0]:.2f}–{ci[1]:.2f})" if ci else ""
            print(f"{label}: {f['samples']} samples, extra wall per sample {f['extra_ms_median']} ms{ci_text}, "
                  f"the pass's own score_ms median {f['score_ms_median']} ms, "
                  f"a sample's wall without the pass median {f['wall_ms_without_median']} ms")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
