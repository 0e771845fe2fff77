#!/usr/bin/env python3
"""Same run, same report: a refactor of the run's records must not change what a run writes.

    python scripts/check_same_report.py --before DIR [--after DIR] [--limit N] [--out DIR]

DIR: a checkout with its own .venv (e.g. a worktree of main before the change); --after defaults to
this checkout. Each checkout runs the bundled default (`edgefarm run`, this host, the bundled model
and dataset; --limit samples), and then each checkout's `edgefarm report --format json` rebuilds the
OTHER's run folder from its files. Checked, all on the same run folder so the latency figures are
the same numbers:

- after's report.json, written in process, equals before's rebuild of after's folder;
- before's report.json equals after's rebuild of before's folder;
- run.json of the two runs has the same keys in the same order at every level (values differ: ids,
  times, hosts' loads).

Only `edgefarm report`'s own stamp differences (none today) would be left out; exit 1 on a difference,
which is printed as a unified diff of the two JSON documents.
"""

from __future__ import annotations

import argparse
import difflib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def edgefarm(checkout: Path, *args: str) -> str:
    out = subprocess.run(
        [str(checkout / ".venv/bin/edgefarm"), *args], capture_output=True, text=True, check=False
    )
    if out.returncode not in (0,):
        sys.exit(f"{checkout}: edgefarm {' '.join(args)} exited {out.returncode}:\n{out.stderr[-2000:]}")
    return out.stdout


def run(checkout: Path, out: Path, limit: int) -> Path:
    edgefarm(checkout, "run", "--devices", "local", "--limit", str(limit), "--out", str(out), "--db", "none")
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    return folder


def shape(value):
    """The keys of a JSON document at every level, in order (values left out)."""
    if isinstance(value, dict):
        return [(k, shape(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [shape(v) for v in value[:1]]
    return type(value).__name__


def same(label: str, a: str, b: str) -> bool:
    if a == b:
        print(f"same: {label}")
        return True
    diff = difflib.unified_diff(a.splitlines(), b.splitlines(), "before", "after", lineterm="", n=1)
    print(f"DIFFERENT: {label}\n" + "\n".join(list(diff)[:80]))
    return False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--after", type=Path, default=REPO)
    ap.add_argument("--limit", type=int, default=8)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    work = args.out or Path(tempfile.mkdtemp(prefix="same-report-"))
    before = run(args.before, work / "before", args.limit)
    after = run(args.after, work / "after", args.limit)
    ok = same(
        "after's report.json vs before's rebuild of after's folder",
        edgefarm(args.before, "report", "--format", "json", str(after)),
        (after / "report.json").read_text(),
    )
    ok &= same(
        "before's report.json vs after's rebuild of before's folder",
        (before / "report.json").read_text(),
        edgefarm(args.after, "report", "--format", "json", str(before)),
    )
    ok &= same(
        "run.json keys (every level, in order)",
        json.dumps(shape(json.loads((before / "run.json").read_text())), indent=1),
        json.dumps(shape(json.loads((after / "run.json").read_text())), indent=1),
    )
    print(f"run folders: {before} {after}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
