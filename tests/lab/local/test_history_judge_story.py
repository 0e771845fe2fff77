"""Issue 41's history story on this host's real runs of the tiny model, each recording itself at its end
in a temp SQLite history and judged against the comparable runs before it (history/judge.py).

The device's runtime is the real one under faulty_runner.py's LATER: each reply takes that much longer
inside the sample's measured time (200 ms: a device whose figure a host's load moves only a little, as
the adb story's fixed-time runner; 600 ms from the fifth run on: a runtime three times as slow, about 3x
the time per sample). Judged against 3 earlier runs, the 99% band is wide (Student's t with 2 degrees of
freedom, 9.9): with 40 ms against 90 ms (the inference's own ~10-50 ms on a loaded host a larger part)
a CI-like load spread runs 1, 3, 4 so far that run 6, still slow, fell back inside run 5's band ("an
outlier"). Six runs:

1-3: identical, a CPU hog (a busy-loop child of this test, bounded) on during the second: no change is
     called, every run says nothing but that it is recorded (fewer than 3 runs before it: not judged);
     `history exclude` then records that run 2 was disturbed.
4:   identical: judged against runs 1 and 3 only: still not enough runs, nothing called.
5:   the 3x slower runtime: called at its end, time per sample worse, against 3 runs (1, 3, 4) (its
     waits let the host's other work in, so TTFT and decode may be called worse at that run too);
     `history --fail-on regression` exits 8.
6:   still slow: no new change of time per sample; its end says it confirms run 5's; `--fail-on
     regression` does not fail on time per sample (another figure a loaded host moved may be called at
     run 5 or 6, at its own run: time per sample is the figure this story moves).
About 15 s on the loaded 2-core host."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .conftest import FAULTY_RUNNER, edgefarm, only_run_dir

HOG_S = 120  # the hog's own bound: it ends even if the test dies before stopping it
NORMAL, SLOW = "LATER=0.2", "LATER=0.6"


def _inventory(tmp: Path, faults: str) -> Path:
    python = tmp / f"python-{faults.replace('=', '-')}"
    python.write_text(
        f'#!/bin/sh\nEDGEFARM_TEST_FAULTS="{faults}" exec "{sys.executable}" "{FAULTY_RUNNER}" "$@"\n'
    )
    python.chmod(0o755)
    inv = tmp / f"devices-{faults.replace('=', '-')}.yaml"
    entry = {"name": "this-host", "kind": "local", "workdir": str(tmp / "w"), "python": str(python)}
    inv.write_text(json.dumps({"devices": [entry]}))
    return inv


def _run(tmp: Path, inv: Path, n: int) -> tuple[str, list[str]]:
    """(run id, its `history:` lines)."""
    out = tmp / f"runs{n}"
    p = edgefarm("run", "--devices", "this-host", "--inventory", str(inv), "--out", str(out), "--modality", "text",
                 "--limit", "6", "--max-output-tokens", "8", "--db", str(tmp / "h.sqlite"))  # fmt: skip
    run = only_run_dir(out)
    assert p.returncode == 0 and run is not None, p.stderr[-3000:]
    said = [x for x in p.stderr.splitlines() if x.startswith("history:")]
    assert said[0] == f"history: recorded in {tmp / 'h.sqlite'}", p.stderr[-3000:]
    return run.name, said[1:]


def _history(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    return edgefarm("history", "--db", str(tmp / "h.sqlite"), *args)


def test_identical_runs_call_nothing_a_hog_run_is_excluded_and_a_3x_slowdown_is_called_where_it_starts(
    tmp_path,
):
    normal, slow = _inventory(tmp_path, NORMAL), _inventory(tmp_path, SLOW)
    ids, said = [], []
    for n in range(1, 7):
        if n == 2:
            busy = f"import time\nend = time.monotonic() + {HOG_S}\nwhile time.monotonic() < end: pass"
            hog = subprocess.Popen([sys.executable, "-c", busy])
            try:
                run_id, lines = _run(tmp_path, normal, n)
            finally:
                hog.kill()
                hog.wait(timeout=30)
            p = _history(tmp_path, "exclude", run_id, "--why", "a CPU hog ran beside it")
            assert p.returncode == 0 and "excluded (a CPU hog ran beside it)" in p.stdout, p.stderr
        else:
            run_id, lines = _run(tmp_path, slow if n >= 5 else normal, n)
        ids.append(run_id)
        said.append(lines)
        if n == 5:
            gate = _history(tmp_path, "--fail-on", "regression", "--format", "md")
            assert gate.returncode == 8, gate.stdout + gate.stderr
            assert f"history --fail-on regression: this-host: Time/sample worse in {run_id}" in gate.stderr

    # 1-4: nothing called (run 2 disturbed, and excluded once known); 5: the slowdown; 6: it confirms it
    assert said[:4] == [[], [], [], []], said
    # Time/sample is the figure this story moves, and the one asserted from run 5 on. The others (TTFT,
    # decode, init: the engine load) move with whatever else loads the host at that moment, either way;
    # runs 5 and 6 may have them called, each at its own run (a loaded CI host drew decode "better" at run
    # 5 and init 1.92x worse at run 6): a change of a figure outside the usual spread, as history says it
    wall = [
        x for x in said[4] if x.startswith(f"history: change: this-host: Time/sample worse in {ids[4]}: ")
    ]
    assert len(wall) == 1 and "the mean of the 3 comparable runs before it" in wall[0], said[4]
    at_5 = [x.startswith("history: change: this-host: ") and f" in {ids[4]}: " in x for x in said[4]]
    assert all(at_5), said[4]
    confirmed = f"history: this-host: the change of Time/sample at {ids[4]} is confirmed by this run"
    assert confirmed in said[5] and not any("change: this-host: Time/sample" in x for x in said[5]), said[5]
    assert all(f" in {ids[5]}: " in x for x in said[5] if "change:" in x), said[5]
    gate = _history(tmp_path, "--fail-on", "regression")  # the latest run's Time/sample is not a change
    assert gate.returncode in (0, 8) and "Time/sample" not in gate.stderr, gate.stderr
    assert gate.returncode == 0 or all(f" in {ids[5]}: " in x for x in gate.stderr.splitlines()), gate.stderr

    data = json.loads(_history(tmp_path, "--format", "json").stdout)
    (series,) = data["series"]
    found = {c["figure"]: (c["run_id"], c["runs"], c["worse"]) for c in series["changes"]}
    assert found["sample_ms_p50"] == (ids[4], 3, True), found
    assert {run for run, _, _ in found.values()} <= {ids[4], ids[5]}, found
    states = [j["state"] for j in series["judgements"]["sample_ms_p50"]]
    assert states == ["few", "excluded", "few", "few", "change", "follows"], states
    (wall_change,) = [c for c in series["changes"] if c["figure"] == "sample_ms_p50"]
    assert wall_change["confirmed"] is True
    ratio = wall_change["value"] / wall_change["mean"]
    assert 2.3 < ratio < 3.6, ratio
    term = _history(tmp_path)
    assert term.returncode == 0 and "✗" in term.stdout and "⚠" in term.stdout, term.stdout
    assert "excluded:" in term.stdout and "not enough runs" in term.stdout  # (the column wraps its text)
    assert (
        "✗ excluded (`history exclude`)" in term.stdout and "⚠ worse: outside the usual spread" in term.stdout
    )
