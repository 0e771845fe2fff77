"""`edgefarm ab` for real: one `kind: local` device over the canned set (the real runtime and tiny
model), two configurations in alternating blocks (ABBA), each block running the samples as often as
fill ab's default --block-s. Two identical configurations keep a ratio near 1 although two CPU hogs are
switched on halfway through (the drift cancels, where two separate runs would carry it), and the
output says how small a difference the run could have resolved; a runtime four times as slow
(faulty_runner SLOWER=3.0: each reply takes four times as long, inside the measured wall time) is
found, its interval clear of 1, and `--fail-on regression` exits 8 (twice as slow was not enough in 1-s
blocks on CI's loaded 2-core machine: one round of six read 0.77, its A blocks hit by the other
workers, and the interval reached 0.88). A 10% slower runtime is not asserted:
on this shared 2-core host a round's log-ratio spreads by 0.13-0.19 (sd) even with 2-s blocks, so
6-8 rounds resolve ±15% at best (±28-71% in the runs of docs/benchmarks/ab.md, hogs included);
scripts/bench_ab.py found it in 30 rounds with a margin of 2% (1.12x (1.02-1.23), 6 minutes), too
thin for a loaded CI machine; the unit tests find it under per-run bursts
(tests/unit/report/test_ab.py). Ctrl-C stops the block under way as a run stops and exits 130. A
failure message carries ab's per-round ratios (its note) and its stderr (each block's time)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import FAULTY_RUNNER, MODELS, REPO
from .test_local_run import canned_dataset

ROUNDS = 6


def ab_lab(root: Path, slower_faults: str) -> Path:
    """The canned dataset (returned) and two inventories of one local device cpu-a under `root`:
    plain.yaml, and slower.yaml whose python is faulty_runner with EDGEFARM_TEST_FAULTS=`slower_faults`
    (scripts/bench_ab.py builds its lab with this too)."""
    ds = canned_dataset(root / "canned", json.loads((MODELS / "canned.json").read_text()))
    slower = root / "python-slower"
    slower.write_text(
        f'#!/bin/sh\nEDGEFARM_TEST_FAULTS="{slower_faults}" exec "{sys.executable}" "{FAULTY_RUNNER}" "$@"\n'
    )
    slower.chmod(0o755)
    for tag, extra in (("plain", {}), ("slower", {"python": str(slower)})):
        entry = {"name": "cpu-a", "kind": "local", "workdir": str(root / "work"), **extra}
        (root / f"{tag}.yaml").write_text(json.dumps({"devices": [entry]}))
    return ds


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("ab")
    return root, ab_lab(root, "SLOWER=3.0")


def _ab(
    root: Path,
    ds: Path,
    out: Path,
    b_inventory: str,
    rounds: int = ROUNDS,
    ab_flags: tuple[str, ...] = (),
    fail_on: str = "regression",
) -> subprocess.Popen:
    """`edgefarm ab` of `plain.yaml` (A) against `b_inventory` (B) on cpu-a over the canned set."""
    argv = [sys.executable, "-m", "orchestrator", "ab", "--a", f"--inventory {root / 'plain.yaml'}",
            "--b", f"--inventory {root / b_inventory}", "--rounds", str(rounds), *ab_flags, "--out", str(out),
            "--format", "json", "--fail-on", fail_on, "--",
            "--devices", "cpu-a", "--dataset", str(ds), "--max-output-tokens", "16"]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "EDGEFARM_INVENTORY"}
    return subprocess.Popen(
        argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _half_widths(wall: dict) -> tuple[float, float]:
    """The least and most half-width (resolution, as a fraction) of the interval whose bounds the json
    gives rounded to 4 decimals (report/paired.py); ab's note is of the exact interval, so a half-width
    recomputed from the json can differ in its last printed digit (172.4% against a printed 172.5%)."""
    ulp = 0.5e-4
    least = ((wall["hi"] - ulp) / (wall["lo"] + ulp)) ** 0.5 - 1
    return least, ((wall["hi"] + ulp) / (wall["lo"] - ulp)) ** 0.5 - 1


def _says_its_resolution(wall: dict, line: str) -> None:
    """The note's `resolves ±x.x%` is the interval's half-width, to its printed digit."""
    least, most = _half_widths(wall)
    printed = re.fullmatch(r".*; resolves ±([\d.]+)% \(half the interval\)", line)
    assert printed and 100 * least - 0.05 <= float(printed[1]) <= 100 * most + 0.05, (line, wall)


def _blocks(out: Path) -> int:
    return sum(
        1
        for side in ("a", "b")
        if (out / side).is_dir()
        for p in (out / side).iterdir()
        if (p / "report.json").is_file()
    )


def test_identical_configurations_with_a_cpu_hog_switched_on_halfway_stay_near_one(lab, tmp_path):
    """The drift cancels: the time-per-sample ratio of identical configurations stays within 25% of 1
    although the second half of the rounds ran beside two CPU hogs (separate runs would carry their
    slowdown). Not asserted: the gate's exit or "no significant difference", which by design come out
    the other way in up to 5% of A/A runs (FAMILY_LEVEL: 95% for all figures at once; one CI run of
    this test drew it: decode "worse", round ratios 1.009-1.165); the gate's power is the next test's."""
    root, ds = lab
    out = tmp_path / "ab"
    proc = _ab(root, ds, out, "plain.yaml", fail_on="none")
    hogs: list[subprocess.Popen] = []
    try:
        deadline = time.monotonic() + 900
        while _blocks(out) < ROUNDS and proc.poll() is None:  # half the blocks done: the load changes
            assert time.monotonic() < deadline
            time.sleep(0.2)
        hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
        stdout, stderr = proc.communicate(timeout=900)
    finally:
        for h in hogs:
            h.send_signal(signal.SIGKILL)
            h.wait()
    data = json.loads(stdout) if stdout.strip() else {}
    said = (data.get("drift_note", "").splitlines()[1:], stderr[-3000:])  # per-round ratios, blocks' times
    assert proc.returncode == 0, said
    (dev,) = data["devices"]
    wall = dev["figures"]["wall_ms"]
    print("identical, hog halfway:", wall, *said[0])  # pytest -rP shows it
    assert 0.75 <= wall["ratio"] <= 1 / 0.75 and wall["pairs"] == ROUNDS * 8, (wall, *said)
    assert wall["lo"] <= wall["ratio"] <= wall["hi"], wall
    by_round = [
        x for x in data["drift_note"].splitlines() if x.startswith("cpu-a: time per sample B/A by round ")
    ]
    assert len(by_round) == 1, data["drift_note"]
    assert len(by_round[0].split(";")[0].split("round ")[1].split()) == ROUNDS, by_round
    _says_its_resolution(wall, by_round[0])  # how small "no significant difference" looked
    assert "each block runs its 8 sample(s) " in data["drift_note"] and "--block-s 2" in data["drift_note"]


def test_a_runtime_four_times_as_slow_is_found_and_fails_the_gate(lab, tmp_path):
    """A 4x effect in 6 rounds of 1-s blocks (the default 2 s cost 12 s more of the suite): lo stays
    above 1 even if two rounds of six are read at a 2.6-fold disadvantage by a load burst on A."""
    root, ds = lab
    proc = _ab(root, ds, tmp_path / "ab", "slower.yaml", ab_flags=("--block-s", "1"))
    stdout, stderr = proc.communicate(timeout=900)
    data = json.loads(stdout) if stdout.strip() else {}
    said = (data.get("drift_note", "").splitlines()[1:], stderr[-3000:])
    assert proc.returncode == 8, said
    (dev,) = data["devices"]
    wall = dev["figures"]["wall_ms"]
    print("four times as slow:", wall, *said[0])
    assert (
        wall["significant"] and wall["lo"] > 1.0 and wall["ratio"] > 2.0 and "Time per sample" in dev["worse"]
    ), (wall, *said)
    assert "ab --fail-on regression: B is significantly worse on 1 device(s): cpu-a: " in stderr


def test_resolve_stops_adding_rounds_once_the_interval_is_that_narrow_and_says_so(lab, tmp_path):
    """--resolve 50 --rounds 6, one pass per block: on a quiet host the interval is within ±50% after 4
    rounds and ab stops there; on a loaded one it may not be, and ab runs all 6 and says NOT reached.
    Either way what it says matches the interval it prints."""
    root, ds = lab
    proc = _ab(
        root, ds, tmp_path / "ab", "plain.yaml", rounds=6, ab_flags=("--resolve", "50", "--block-s", "0")
    )
    stdout, stderr = proc.communicate(timeout=900)
    assert proc.returncode == 0, stderr[-3000:]
    data = json.loads(stdout)
    wall = data["devices"][0]["figures"]["wall_ms"]
    least, most = _half_widths(wall)
    note = data["drift_note"].splitlines()
    ran = int(note[0].split()[0])
    print("resolve 50:", wall, *note)
    assert wall["pairs"] == ran * 8 and "each block as the run flags say" in note[0], note
    said = {"reached" if least <= 0.5 else None, "NOT reached" if most > 0.5 else None} - {None}
    if ran == 4:
        assert "reached" in said and note[1] == "--resolve 50%: reached after 4 of at most 6 rounds", note
    else:
        assert ran == 6 and any(note[1].startswith(f"--resolve 50%: {w} ") for w in said), note
    _says_its_resolution(wall, note[-1])
    assert stderr.count("block ") == 2 + 2 * ran  # two warm-ups, then only the rounds it needed


def test_ctrl_c_stops_the_block_under_way_and_exits_130(lab, tmp_path):
    root, ds = lab
    out = tmp_path / "ab"
    proc = _ab(root, ds, out, "plain.yaml", rounds=2)
    deadline = time.monotonic() + 300
    while not (out / "warmup").is_dir() or not any((out / "warmup").iterdir()):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)  # a terminal's Ctrl-C: ab's block runs in its own session
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, (stdout, stderr)
    assert "edgefarm ab: interrupted in block 1 of 6" in stderr and stdout == "", stderr
