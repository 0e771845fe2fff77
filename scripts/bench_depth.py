#!/usr/bin/env python3
"""Decode speed against context depth: `edgefarm bench` depth sweeps on this host and on lab phones.

    flock /tmp/edgefarm-bench.lock flock /tmp/edgefarm-lab.lock \
        python scripts/bench_depth.py --model /tmp/depth-model/tiny-text-dynamic.litertlm \
            [--model data/models/tiny-text.litertlm] [-d 0,1024,2048,4096,7168] [-p 64] [-n 64] [-r 5]
            [--phones 2] [--threads 1] [--json]

For each model, device and depth, one `edgefarm bench --devices NAME -p P -n N -d DEPTH -r R` (a fresh
runner and engine per depth: LiteRT-LM 0.18.1's dynamic KV cache grows and never shrinks within an
engine, so later sessions of that engine decode over the largest context it held; devices one after
another, never side by side: they share this host's cores), and per depth the decode row
(`tg{n}` at n_depth d + p): mean tokens/s with its 95% interval over the repetitions, the runtime's
own per-turn figures. The lab phones are the device lab's emulated phones (real adb servers, mksh +
toybox, edgefarm's native runner on the real runtime's C API); they run on this host's CPU, so they
show the runtime's behaviour through the phone path, not a phone's speed. Needs the lab's tools
(bubblewrap, mksh, toybox, a C compiler). The model is the dynamic-context tiny model
(scripts/build_tiny_model.py --dynamic-context, docs/bench.md), and the bundled tiny-text for contrast.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from orchestrator.bench.grid import parse_values
from orchestrator.devices.adb_discovery import known_name
from orchestrator.models import inspect_model
from tests.lab.adb.conftest import running_lab
from tests.lab.adb.sandbox import GALAXY_S24, PIXEL_8, REDMI_NOTE_13

LAB_PHONES = (("pixel8", PIXEL_8), ("s24", GALAXY_S24), ("redmi", REDMI_NOTE_13))
HOST = "this-host"


def bench(
    env: dict[str, str], inventory: Path, out: Path, model: Path, device: str, flags: list[str]
) -> list[dict]:
    argv = [sys.executable, "-m", "orchestrator", "bench", "--devices", device, "--inventory", str(inventory),
            "--model", str(model), "--out", str(out), "-o", "json", "--db", "none", *flags]  # fmt: skip
    p = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, check=False, timeout=3600)
    if p.returncode != 0:
        raise SystemExit(
            f"edgefarm bench on {device} with {model.name} failed ({p.returncode}):\n{p.stderr[-3000:]}"
        )
    return json.loads(p.stdout)


def fitting_depths(model: Path, depths: str, p: int, n: int) -> str:
    """The depths whose d + p + n fit the model's context (the bundled tiny-text: 2048 tokens)."""
    limit = inspect_model(model).max_context_tokens
    kept = [d for d in parse_values(depths, "-d") if not limit or d + p + n <= limit]
    if not kept:
        raise SystemExit(f"{model.name}: no depth of {depths} fits its context of {limit} tokens")
    return ",".join(map(str, kept))


def decode_rows(rows: list[dict]) -> list[dict]:
    """The decode figures per depth: n_depth of the tg row is d + p (the decode follows the prompt)."""
    out = []
    for r in sorted((r for r in rows if r["test"].startswith("tg")), key=lambda r: r["n_depth"]):
        if r["errors"]:
            raise SystemExit(f"{r['device']} {r['cell']}: {r['errors']} repetitions failed")
        out.append({"n_depth": r["n_depth"], "avg_ts": r["avg_ts"], "stddev_ts": r["stddev_ts"],
                    "ci95": [r["ci95_lo_ts"], r["ci95_hi_ts"]], "samples_ts": r["samples_ts"],
                    "repetitions": r["repetitions"]})  # fmt: skip
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, action="append", required=True, help="a .litertlm (repeatable)")
    ap.add_argument("-d", default="0,1024,2048,4096,7168", help="depths (llama-bench syntax)")
    ap.add_argument("-p", type=int, default=64)
    ap.add_argument("-n", type=int, default=64)
    ap.add_argument("-r", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1, help="CPU threads (1: steadier on a shared host)")
    ap.add_argument("--phones", type=int, default=2, choices=range(len(LAB_PHONES) + 1))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    flags = ["-p", str(args.p), "-n", str(args.n), "-r", str(args.r), "--backend", "cpu", "--threads",
             str(args.threads)]  # fmt: skip
    results: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="bench-depth-") as tmp:
        work = Path(tmp)
        inventory = work / "devices.yaml"
        inventory.write_text(f"devices:\n  - name: {HOST}\n    kind: local\n    workdir: {work / 'host'}\n")
        with running_lab(
            work, [(label, spec, 0) for label, spec in LAB_PHONES[: args.phones]], hosts=1
        ) as lab:
            env = lab.env(COLUMNS="200", EDGEFARM_CACHE_DIR=str(work / "cache"))
            env.pop("EDGEFARM_INVENTORY", None)
            phones = [known_name(spec.props) for _, spec in LAB_PHONES[: args.phones]]  # discovery's names
            for model in args.model:
                for device in [HOST, *phones]:
                    decode = []
                    for depth in fitting_depths(model, args.d, args.p, args.n).split(","):
                        rows = bench(
                            env, inventory, work / "runs", model.resolve(), device, [*flags, "-d", depth]
                        )
                        decode += decode_rows(rows)
                    results.append({"model": model.name, "device": device, "decode": decode})
                    print(f"{model.name} on {device}: done", file=sys.stderr)
    if args.json:
        print(json.dumps({"flags": flags, "results": results}, indent=2))
        return 0
    for res in results:
        cells = "  ".join(f"d{r['n_depth']}: {r['avg_ts']:.0f} ({r['ci95'][0]:.0f}-{r['ci95'][1]:.0f})"
                          for r in res["decode"])  # fmt: skip
        print(f"{res['model']:<28} {res['device']:<20} decode t/s {cells}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main())
