"""Several `kind: local` devices in one run share this host: each gets its own job folder and
runner.pid, so no runner stops another, and every sample runs once per device. By default they run
one after another (they share the CPU), together only with --parallel-local; run.json says which.
A resume adds its model loads to the ones recorded before (summed over the run and its resumes)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from .conftest import FAULTY_RUNNER, TINY_TEXT, edgefarm, only_run_dir, results, run_json

THREADS = {"host-t1": 1, "host-t2": 2, "host-t3": 3}
LIMIT = 3


def _farm(tmp_path: Path) -> tuple[Path, Path]:
    """Three local devices with ONE work folder (as three `kind: local` entries without a workdir
    share this host's), each with its own threads; their python logs when a runner starts and ends."""
    log = tmp_path / "runners.log"
    wrapper = tmp_path / "python-logged"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'echo "start $$" >> "{log}"\n'
        f'"{sys.executable}" "{FAULTY_RUNNER}" "$@"\n'
        "rc=$?\n"
        f'echo "end $$" >> "{log}"\n'
        "exit $rc\n"
    )
    wrapper.chmod(0o755)
    entries = [{"name": n, "kind": "local", "workdir": str(tmp_path / "work"), "python": str(wrapper), "threads": t}
               for n, t in THREADS.items()]  # fmt: skip
    inv = tmp_path / "devices.yaml"
    inv.write_text(json.dumps({"devices": entries}))
    return inv, log


def _run(tmp_path: Path, *flags: str) -> tuple[Path, list[str]]:
    inv, log = _farm(tmp_path)
    out = tmp_path / "runs"
    p = edgefarm("run", "--devices", ",".join(THREADS), "--inventory", str(inv), "--model", str(TINY_TEXT),
                 "--modality", "text", "--limit", str(LIMIT), "--out", str(out), *flags,
                 env={"EDGEFARM_TEST_FAULTS": "SLOW=0.3"})  # fmt: skip
    run_dir = only_run_dir(out)
    assert p.returncode == 0 and run_dir is not None, p.stderr[-3000:]
    assert p.stdout.strip().splitlines()[-1] == str(run_dir / "report.html")
    return run_dir, log.read_text().splitlines()


def _every_sample_once_per_device(run_dir: Path, tmp_path: Path) -> None:
    ids = None
    for name, threads in THREADS.items():
        rows = results(run_dir, name)
        assert [r["status"] for r in rows] == ["ok"] * LIMIT, rows
        assert {r["threads"] for r in rows} == {threads}  # each device ran with its own settings
        ids = ids or [r["id"] for r in rows]
        assert [r["id"] for r in rows] == ids
        outcome = json.loads((run_dir / "devices" / name / "outcome.json").read_text())
        assert outcome["error"] == "" and outcome["model_loads"] == 1, outcome  # never restarted
        assert not [n for n in outcome["notes"] if "stopped an earlier runner" in n or "restarted" in n]
    for name in THREADS:
        job = tmp_path / "work" / "runs" / run_dir.name / name / "job"  # its own job folder and pid record
        assert len((job / "results.jsonl").read_text().splitlines()) == LIMIT
        assert (job / "runner.pid").is_file()


def test_local_devices_run_together_when_asked_and_none_stops_another(tmp_path: Path):
    run_dir, log = _run(tmp_path, "--parallel-local")
    _every_sample_once_per_device(run_dir, tmp_path)
    assert run_json(run_dir, "run.json")["host_sharing"] == {"devices": list(THREADS), "mode": "parallel"}
    assert sorted(x.split()[0] for x in log) == ["end"] * 3 + ["start"] * 3


@pytest.fixture()
def sequential_run(tmp_path: Path) -> tuple[Path, list[str]]:
    return _run(tmp_path)


def test_local_devices_run_one_after_another_by_default(tmp_path: Path, sequential_run):
    run_dir, log = sequential_run
    _every_sample_once_per_device(run_dir, tmp_path)
    assert run_json(run_dir, "run.json")["host_sharing"] == {"devices": list(THREADS), "mode": "sequential"}
    # a runner starts only once the one before it has ended
    assert [x.split()[0] for x in log] == ["start", "end"] * 3, log


def test_model_loads_are_summed_over_the_run_and_its_resumes(tmp_path: Path, sequential_run):
    run_dir, _ = sequential_run
    p = edgefarm("run", "--resume", str(run_dir))  # every sample is done: nothing runs, nothing loads
    assert p.returncode == 0, p.stderr[-3000:]
    for name in THREADS:
        outcome = json.loads((run_dir / "devices" / name / "outcome.json").read_text())
        assert (outcome["model_loads"], outcome["sessions"]) == (1, 2), outcome
    rows = {r["device"]: r for r in run_json(run_dir)["devices"]}
    assert {rows[n]["model_loads"] for n in THREADS} == {1}
