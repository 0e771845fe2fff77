"""`edgefarm compare` as a CI gate, for real: three runs of one `kind: local` device over the canned
set (the real runtime and tiny model), one of them on a runtime whose every reply takes 0.5 s longer
(below the runner seam). Not "twice as long": two runs carry the host's drift between them, and in
CI (4 test workers on 2 cores) a first run came out more than twice as slow as a later one
(B/A 0.56, significant); a fixed half second against the tiny model's 10-50 ms replies no load hides.
`--fail-on regression` exits 8 on the slower run and 0 on a run against itself; json/csv/md carry
the same findings; a run made with --warmup is refused naming that setting."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import pytest

from .conftest import FAULTY_RUNNER, MODELS, edgefarm, only_run_dir
from .test_local_run import canned_dataset


def _run(tmp: Path, tag: str, ds: Path, later_s: float = 0.0, *flags: str) -> Path:
    """One run of device `cpu-a`; `later_s`: its runtime's replies take that many seconds longer
    (faulty_runner LATER, inside the measured wall time)."""
    entry = {"name": "cpu-a", "kind": "local", "workdir": str(tmp / f"work-{tag}")}
    if later_s:
        wrapper = tmp / f"python-{tag}"
        wrapper.write_text(
            f'#!/bin/sh\nEDGEFARM_TEST_FAULTS="LATER={later_s}" exec "{sys.executable}" "{FAULTY_RUNNER}" "$@"\n'
        )
        wrapper.chmod(0o755)
        entry["python"] = str(wrapper)
    inv = tmp / f"devices-{tag}.yaml"
    inv.write_text(json.dumps({"devices": [entry]}))
    out = tmp / f"runs-{tag}"
    p = edgefarm("run", "--devices", "cpu-a", "--inventory", str(inv), "--out", str(out), "--dataset", str(ds),
                 "--max-output-tokens", "16", *flags)  # fmt: skip
    assert p.returncode == 0, p.stderr
    return only_run_dir(out)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("gate")
    ds = canned_dataset(root / "canned", json.loads((MODELS / "canned.json").read_text()))
    return {
        "a": _run(root, "a", ds),
        "slow": _run(root, "slow", ds, 0.5),
        "warm": _run(root, "warm", ds, 0.0, "--warmup", "1"),
    }


def test_fail_on_regression_exits_8_on_a_slower_runtime_and_0_on_the_same_run(runs):
    same = edgefarm("compare", str(runs["a"]), str(runs["a"]), "--fail-on", "regression")
    assert same.returncode == 2 and "the same folder" in same.stderr  # a run against itself: refused, not 8
    slow = edgefarm("compare", str(runs["a"]), str(runs["slow"]), "--fail-on", "regression")
    assert slow.returncode == 8, (slow.stdout, slow.stderr)
    assert "B is significantly worse on 1 device(s): cpu-a: Time per sample" in slow.stderr
    plain = edgefarm("compare", str(runs["a"]), str(runs["slow"]))
    assert plain.returncode == 0  # without --fail-on, compare reports and exits 0
    assert "drift" in plain.stdout  # a between-run speed ratio includes the machine's drift: said
    back = edgefarm("compare", str(runs["slow"]), str(runs["a"]), "--fail-on", "any")
    assert back.returncode == 8 and "significantly different" in back.stderr  # faster is a change too
    assert "cpu-a: Time per sample" in back.stderr


def test_json_csv_and_md_carry_the_same_findings(runs):
    j = edgefarm("compare", str(runs["a"]), str(runs["slow"]), "--format", "json")
    assert j.returncode == 0, j.stderr
    data = json.loads(j.stdout)
    (dev,) = data["devices"]
    wall = dev["figures"]["wall_ms"]
    assert (
        dev["device"] == "cpu-a"
        and wall["significant"]
        and wall["lo"] > 1.0
        and "Time per sample" in dev["worse"]
    )
    assert data["common_samples"] == 8 and "drift" in data["drift_note"]
    rows = list(
        csv.DictReader(
            io.StringIO(edgefarm("compare", str(runs["a"]), str(runs["slow"]), "--format", "csv").stdout)
        )
    )
    wall_row = next(r for r in rows if r["figure"] == "wall_ms")
    assert float(wall_row["lo"]) == wall["lo"] and wall_row["worse"] == "True"
    md = edgefarm("compare", str(runs["a"]), str(runs["slow"]), "--format", "md").stdout
    assert md.startswith(f"# {runs['a'].name} → {runs['slow'].name}") and "| cpu-a | 8 |" in md


def test_a_warmup_is_a_setting_that_differs(runs):
    refused = edgefarm("compare", str(runs["a"]), str(runs["warm"]))
    assert refused.returncode == 2
    assert f"warmup: 0 in {runs['a'].name}, 1 in {runs['warm'].name}" in refused.stderr, refused.stderr
