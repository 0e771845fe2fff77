"""A controller writing runs into the results database, for the concurrency and kill tests (a
separate process each): `writer.py many DB TAG N GO_FILE` builds N runs (and one run every writer
shares), waits for GO_FILE, then writes them; `writer.py big DB` writes one run of 3 x 40,000 samples
(long enough to be killed in the middle)."""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(REPO), str(REPO / "tests" / "unit" / "history")]

from history_runs import report

from orchestrator.history.db import opened
from orchestrator.history.entry import run_entry
from orchestrator.history.store import write_run

BIG_SAMPLES = 40_000


def entry(run_id: str):
    rep = report(run_id, "2026-02-01T00:00:00+00:00", {"pixel-8": 100.0, "s24": 120.0, "redmi": 90.0})
    return run_entry(rep, f"/runs/{run_id}", rep.run["device_versions"])


def main() -> None:
    mode, db = sys.argv[1], sys.argv[2]
    if mode == "many":
        tag, n, go = sys.argv[3], int(sys.argv[4]), Path(sys.argv[5])
        entries = [entry(f"20260201-{i:06d}-{tag}") for i in range(n)] + [entry("20260201-999999-5aed")]
        while not go.exists():
            time.sleep(0.01)
        with opened(db) as store:
            print(" ".join(write_run(store, e) for e in entries), flush=True)
    else:
        e = entry("20260301-000000-b16b")
        cell = next(iter(e.devices[0].samples.values()))
        many = {f"x{i}": cell for i in range(BIG_SAMPLES)}
        e = dataclasses.replace(e, devices=tuple(dataclasses.replace(d, samples=many) for d in e.devices))
        with opened(db) as store:
            print("writing", flush=True)
            write_run(store, e)
            print("written", flush=True)


if __name__ == "__main__":
    main()
