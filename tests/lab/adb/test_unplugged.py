"""The user's story: a phone is unplugged mid-run, the others finish, and `--resume` finishes it later.

Real `edgefarm` CLI (a subprocess), real adb servers, emulated phones. The Pixel 8 is slowed by a
lab fault rule (`sleep S` in its /data/local/tmp/edgefarm-lab-faults) so it is reliably caught with
work left, then vanishes (a pulled cable) once its first result has streamed into the run folder.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from orchestrator.datasets import BUNDLED_DATASET, load_dataset
from orchestrator.run.selection import select_samples

from .test_farm_run import PHONES, REPO, edgefarm, inventory

LOST, LOST_LABEL = "google-pixel-8", "pixel8"
LABELS = {"google-pixel-8": "pixel8", "samsung-sm-s921b": "s24", "redmi-note-13": "redmi"}
LIMIT = 4  # the slow phone is lost after its first result: 3 left for --resume
WAIT_S = 60.0


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.is_file() else []


def _wait_for(what: str, check, proc: subprocess.Popen, log: Path, timeout_s: float = WAIT_S):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        if proc.poll() is not None:
            tail = log.read_text()[-3000:]
            raise AssertionError(f"edgefarm exited ({proc.returncode}) before {what}:\n{tail}")
        time.sleep(0.05)
    raise AssertionError(f"no {what} within {timeout_s:g} s:\n{log.read_text()[-3000:]}")


def _on_phone(lab, label: str, run_id: str) -> Path:
    """The run's job folder on the phone (its /data is a host folder)."""
    return lab.device_root(label) / "local" / "tmp" / "edgefarm" / "runs" / run_id / "job"


def _done_rows(job: Path) -> list[str]:
    path = job / "done.tsv"
    return [ln.split("\t")[0] for ln in path.read_text().splitlines() if ln.strip()] if path.is_file() else []


def test_unplugged_phone_is_reported_lost_keeps_its_results_and_resume_finishes_it(adb_lab, tmp_path):
    ids = [s.id for s in select_samples(load_dataset(BUNDLED_DATASET), ["text"], LIMIT, None)]
    assert len(ids) == LIMIT
    out = tmp_path / "runs"
    args = ["run", "--devices", "all", "--inventory", str(inventory(adb_lab, tmp_path)), "--modality", "text",
            "--limit", str(LIMIT), "--max-output-tokens", "8", "--sample-timeout", "60", "--out", str(out)]  # fmt: skip
    faults = adb_lab.device_root(LOST_LABEL) / "local" / "tmp" / "edgefarm-lab-faults"
    faults.parent.mkdir(parents=True, exist_ok=True)
    faults.write_text("sleep 1.5\n")  # a slow phone: still busy when it is unplugged
    log = tmp_path / "first.log"
    env = adb_lab.env(COLUMNS="200", EDGEFARM_PHONE_RUNNER="upstream")
    env.pop("EDGEFARM_INVENTORY", None)
    try:
        with open(log, "w") as sink:
            proc = subprocess.Popen([sys.executable, "-m", "orchestrator", *args], cwd=REPO, env=env,
                                    stdout=sink, stderr=subprocess.STDOUT, text=True)  # fmt: skip
            try:
                run_dir = _wait_for("run folder", lambda: next((p for p in out.glob("*") if p.is_dir()), None),
                                    proc, log)  # fmt: skip
                stream = run_dir / "devices" / LOST / "results.stream.jsonl"
                _wait_for(f"{LOST} result", lambda: len(_jsonl(stream)) >= 1, proc, log)
                adb_lab.phones[LOST_LABEL].vanish()
                rc = proc.wait(timeout=WAIT_S)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        first = log.read_text()
        run_id = run_dir.name

        # The run ends (no hang), exits 3, and says which phone was lost and what to do.
        assert rc == 3, first[-3000:]
        assert f"{LOST} failed" in first and "--resume" in first, first[-3000:]
        lost_dir = run_dir / "devices" / LOST
        outcome = json.loads((lost_dir / "outcome.json").read_text())
        assert "lost" in outcome["error"] and LOST in outcome["error"] and "--resume" in outcome["error"]

        # The other phones finished every sample.
        for name in set(PHONES) - {LOST}:
            dev = run_dir / "devices" / name
            assert json.loads((dev / "outcome.json").read_text())["error"] == "", name
            assert [r["id"] for r in _jsonl(dev / "results.jsonl")] == ids, name
            assert json.loads((dev / "report.json").read_text())["summary"]["total_scored"] == LIMIT, name

        # The lost phone: what finished before the cable came out is kept and scored, the rest skipped.
        kept = _jsonl(lost_dir / "results.jsonl")
        k = len(kept)
        assert 1 <= k < LIMIT, kept
        assert [r["id"] for r in kept] == ids[:k] and all(r["status"] == "ok" for r in kept), kept
        summary = json.loads((lost_dir / "report.json").read_text())["summary"]
        assert summary["total_scored"] == k and summary["skipped"] == ids[k:], summary
        assert not (lost_dir / "results.stream.jsonl").exists()  # folded into results.jsonl

        # The combined reports list the lost phone with its error.
        combined = {d["device"]: d for d in json.loads((run_dir / "report.json").read_text())["devices"]}
        assert set(combined) == set(PHONES)
        assert "lost" in combined[LOST]["error"] and combined[LOST]["samples"] == k
        assert all(combined[n]["error"] == "" for n in set(PHONES) - {LOST})
        assert f"{LOST} failed:" in (run_dir / "report.md").read_text()

        serial = adb_lab.serials[LOST_LABEL]
        state = {d.serial: d.state for d in adb_lab.servers[0].client().list()}.get(serial, "absent")
        assert state != "device", "the unplugged phone is still attached: vanish() did not pull the cable"

        # The phone comes back (same port -> same serial -> same name, same /data); resume.
        faults.unlink()
        adb_lab.come_back(LOST_LABEL)
        before = {name: _done_rows(_on_phone(adb_lab, LABELS[name], run_id)) for name in PHONES}
        assert before[LOST][:k] == [str(n) for n in range(1, k + 1)] and len(before[LOST]) < LIMIT, before
        stamps = {name: {p: p.stat().st_mtime_ns for p in _on_phone(adb_lab, LABELS[name], run_id).rglob("stdout")}
                  for name in set(PHONES) - {LOST}}  # fmt: skip
        pushed = {name: json.loads((run_dir / "devices" / name / "outcome.json").read_text())["model_push"]["bytes_sent"]
                  for name in PHONES}  # fmt: skip
        second = edgefarm(adb_lab, *args, "--resume", str(run_dir), timeout=120)
        assert second.returncode == 0, second.stderr[-3000:]
        assert sorted(p for p in out.iterdir() if p.is_dir()) == [run_dir]  # no new run folder

        for name in PHONES:
            dev = run_dir / "devices" / name
            results = _jsonl(dev / "results.jsonl")
            assert [r["id"] for r in results] == ids, name  # every sample exactly once, in order
            assert all(r["status"] == "ok" for r in results), (name, results)
            report = json.loads((dev / "report.json").read_text())["summary"]
            assert report["total_scored"] == LIMIT and report["skipped"] == [], (name, report)
            done = _done_rows(_on_phone(adb_lab, LABELS[name], run_id))
            assert sorted(done, key=int) == [str(n) for n in range(1, LIMIT + 1)], (name, done)  # ran once
            assert done[: len(before[name])] == before[name], name  # finished samples were not run again
            # the outcome sums the run's sessions: the resume pushed no model bytes
            assert json.loads((dev / "outcome.json").read_text())["model_push"]["bytes_sent"] == pushed[name], name
        for name, seen in stamps.items():  # the finished phones ran nothing at all
            assert before[name] == _done_rows(_on_phone(adb_lab, LABELS[name], run_id)), name
            assert seen and all(p.stat().st_mtime_ns == t for p, t in seen.items()), name
        combined = json.loads((run_dir / "report.json").read_text())
        rows = combined["devices"]
        assert all(d["error"] == "" and d["samples"] == LIMIT for d in rows), rows
        assert [s["id"] for s in combined["samples"]] == ids
        assert all(set(s["cells"]) == set(PHONES) for s in combined["samples"]), combined["samples"]
        assert "failed" not in (run_dir / "report.md").read_text()
    finally:
        faults.unlink(missing_ok=True)
        adb_lab.come_back(LOST_LABEL)  # the lab is shared: leave every phone attached
