"""Issue 34 item 1, through the real CLI: every count, size and time `edgefarm run` takes has a ceiling,
checked before anything is staged, and the first SIGTERM ends staging.

Before: `--repeat 1000000000` kept the controller "staging" while it grew without bound (12 GB in ten
minutes), `--repeat 99999999999999999999` was accepted, and a SIGTERM during staging was noted but the
staging went on to its end (each copy of a sample also got its own copy of every media file).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orchestrator.interrupt import INTERRUPTED_EXIT

from .conftest import REPO, edgefarm


@pytest.mark.parametrize(
    "flags,where,says",
    [
        (("--repeat", "99999999999999999999"), "--repeat", "outside 1..1000"),
        (("--limit", "1", "--repeat", "1000000000"), "--repeat", "outside 1..1000"),
        (
            ("--repeat", "999"),
            "--repeat",
            "200 samples x 999 passes + 0 warm-up(s) is 199,800 runs per device",
        ),
        (("--warmup", "5000"), "--warmup", "outside 0..1000"),
        (("--sustain", "1000"), "--sustain", "outside 1..100"),
        (("--sample-timeout", "nan"), "--sample-timeout", "outside 1..86400"),
        (("--cooldown-c", "inf"), "--cooldown-c", "outside 0..120"),
        (("--threads", "100000"), "--threads", "outside 1..256"),
        (("--max-output-tokens", "99999999999"), "--max-output-tokens", "outside 1..1e+07"),
        (("--limit", "10000000"), "--limit", "outside 1..1e+06"),
        (("--fallback-wait-s", "1e9"), "--fallback-wait-s", "outside 0..3600"),
    ],
)
def test_a_count_or_time_past_its_bound_is_refused_before_anything_is_staged(
    tmp_path: Path, local_inventory, flags, where, says
):
    out = tmp_path / "runs"
    t0 = time.monotonic()
    p = edgefarm("run", "--devices", "local", "--inventory", str(local_inventory()), "--out", str(out), *flags,
                 timeout=120)  # fmt: skip
    assert p.returncode == 2, p.stderr[-2000:]
    said = " ".join(p.stderr.split())
    assert f"error: {where}: " in said and says in said and f"fix: pass {where} " in said, said
    assert "Traceback" not in said and not out.exists()  # nothing written, no device touched
    assert time.monotonic() - t0 < 100


def test_the_first_sigterm_ends_staging_and_the_run_exits_130(tmp_path: Path, local_inventory):
    """100,000 job lines (the bound: 200 samples x --repeat 500) take seconds to make and seconds more to
    write (5.5 s here under other tests' load); one SIGTERM as soon as their bundle is begun ends the
    staging at once (the test reacts within its 0.05 s poll, well inside those seconds: it waited 1 s
    more before, and on a quieter host the items were made within that second and the lines, deaf to
    the stop then, were written), nothing runs, exit 130."""
    out = tmp_path / "runs"
    env = dict(os.environ, COLUMNS="200")
    env.pop("EDGEFARM_INVENTORY", None)
    log = tmp_path / "run.log"
    with open(log, "w") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "orchestrator", "run", "--devices", "local", "--inventory",
             str(local_inventory()), "--out", str(out), "--repeat", "500"],
            cwd=REPO, env=env, stdout=sink, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not list(out.glob("*/devices/this-host/job/media")):
            assert proc.poll() is None, log.read_text()[-3000:]
            time.sleep(0.05)
        assert proc.poll() is None
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=120)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
    said = log.read_text()
    assert code == INTERRUPTED_EXIT, said[-3000:]
    assert took < 10, f"{took:.1f} s from SIGTERM to exit: staging went on"
    run_dir = next(out.iterdir())
    assert not (run_dir / "devices" / "this-host" / "job" / "job.jsonl").exists()  # staging stopped mid-way
    assert "--resume" in said and "Traceback" not in said


def test_dataset_check_names_a_row_over_the_turn_bound(tmp_path: Path):
    """Issue 34 item 7: `dataset check` accepted a 100-turn row without a word."""
    rows = [
        {"test_id": f"MTR-{n}", "modality": "multi_turn", "task": "context_retention",
         "turns": [f"turn {i}" for i in range(n)], "reference": "x"}
        for n in (64, 100)
    ]  # fmt: skip
    meta = tmp_path / "metadata.jsonl"
    meta.write_text("".join(json.dumps(r) + "\n" for r in rows))
    p = edgefarm("dataset", "check", str(meta))
    said = " ".join((p.stdout + p.stderr).split())
    assert p.returncode == 2, said
    assert (
        f"{meta}:2 MTR-100 field 'turns'" in said
        and "100 turns: edgefarm runs at most 64 turns per row" in said
    )
    assert "MTR-64" not in said
