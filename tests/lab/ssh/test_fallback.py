"""Stand-in boards through the real CLI: a Raspberry Pi runs the samples of phones that are missing.

The board is the loopback sshd board; the phones are the device lab's emulated phones behind real
adb servers (tests/lab/adb), or phones declared in devices.yaml that are simply not attached.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from orchestrator.datasets import BUNDLED_DATASET, load_dataset
from orchestrator.run.selection import select_samples

from ..local.conftest import REPO, edgefarm, only_run_dir
from .conftest import free_port, write_inventory

LIMIT = 4


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.is_file() else []


def _ids(limit: int = LIMIT) -> list[str]:
    return [s.id for s in select_samples(load_dataset(BUNDLED_DATASET), ["text"], limit, None)]


def test_devices_all_with_no_phone_attached_runs_on_the_board_standing_in_for_two_phones(board, tmp_path):
    """Two phones declared in devices.yaml, none attached (no adb server at all): `--devices all` runs on
    the board, which also runs each phone's samples as its stand-in, marked, in the phones' columns."""
    pi = board.entry("pi-lab", tmp_path / "board", fallback_for=["pixel-8", "galaxy-s24"])
    phones = [{"name": "pixel-8", "kind": "adb", "serial": "37121FDJH002AB"},
              {"name": "galaxy-s24", "kind": "adb", "serial": "R5CX10ABCDE"}]  # fmt: skip
    inv = write_inventory(tmp_path / "devices.yaml", pi, *phones)
    out = tmp_path / "runs"
    no_adb = {"ANDROID_ADB_SERVER_PORT": str(free_port(52000))}  # nothing listens: no phone anywhere
    p = edgefarm("run", "--devices", "all", "--inventory", str(inv), "--out", str(out), "--modality", "text",
                 "--limit", str(LIMIT), "--max-output-tokens", "6", env=no_adb)  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    assert "pixel-8" in p.stderr and "stands in" in p.stderr, p.stderr[-2000:]
    run_dir = only_run_dir(out)
    ids = _ids()
    own = _jsonl(run_dir / "devices" / "pi-lab" / "results.jsonl")
    assert [r["id"] for r in own] == ids and all(not r["stood_in_for"] for r in own)
    run = json.loads((run_dir / "run.json").read_text())
    assert {s["phone"]: s["board"] for s in run["stand_ins"]} == {"pixel-8": "pi-lab", "galaxy-s24": "pi-lab"}
    assert all(s["completed"] and s["reason"] == "absent at the start" for s in run["stand_ins"])
    for phone in ("pixel-8", "galaxy-s24"):
        stood = _jsonl(run_dir / "devices" / f"pi-lab-for-{phone}" / "results.jsonl")
        assert [r["id"] for r in stood] == ids and {r["stood_in_for"] for r in stood} == {phone}
        column = _jsonl(run_dir / "devices" / phone / "results.jsonl")
        assert [r["id"] for r in column] == ids and all(r["status"] == "ok" for r in column)
        assert (
            json.loads((run_dir / "devices" / phone / "report.json").read_text())["summary"]["total_scored"]
            == LIMIT
        )
    report = json.loads((run_dir / "report.json").read_text())
    rows = {d["device"]: d for d in report["devices"]}
    assert rows["pixel-8"]["stand_in"] == f"pi-lab ran {LIMIT}" and rows["pixel-8"]["samples"] == LIMIT
    assert rows["pixel-8"]["ttft_ms_p50"] is None  # the phone's own figures: it ran nothing
    assert rows["pi-lab"]["samples"] == 3 * LIMIT  # its own figures count what it ran as a stand-in
    assert rows["pi-lab"]["stand_in"] == f"for galaxy-s24: {LIMIT}, for pixel-8: {LIMIT}"
    for s in report["samples"]:
        assert s["cells"]["pixel-8"]["stood_in"] and not s["cells"]["pi-lab"]["stood_in"]
        assert s["cells"]["pixel-8"]["output"] == s["cells"]["pi-lab"]["output"]  # same board, greedy
    md, html = (run_dir / "report.md").read_text(), (run_dir / "report.html").read_text()
    assert "(stand-in)" in md and "pi-lab ran 4" in md and "(stand-in)" in html and "pi-lab ran 4" in html

    # named on purpose while absent: the run goes ahead on its stand-in alone, which gets a row of its own
    out2 = tmp_path / "runs2"
    p = edgefarm("run", "--devices", "pixel-8", "--inventory", str(inv), "--out", str(out2), "--modality", "text",
                 "--limit", str(LIMIT), "--max-output-tokens", "6", env=no_adb)  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    run_dir = only_run_dir(out2)
    rows = {d["device"]: d for d in json.loads((run_dir / "report.json").read_text())["devices"]}
    assert set(rows) == {"pixel-8", "pi-lab"}
    assert rows["pi-lab"]["samples"] == LIMIT and rows["pi-lab"]["stand_in"] == f"for pixel-8: {LIMIT}"
    assert rows["pi-lab"]["ttft_ms_p50"] and rows["pixel-8"]["stand_in"] == f"pi-lab ran {LIMIT}"
    assert [r["id"] for r in _jsonl(run_dir / "devices" / "pixel-8" / "results.jsonl")] == ids


LOST, LOST_LABEL = "google-pixel-8", "pixel8"  # found on the adb server: named as its owner knows it


def _wait_for(what: str, check, proc: subprocess.Popen, log: Path, timeout_s: float = 90.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        if proc.poll() is not None:
            raise AssertionError(
                f"edgefarm exited ({proc.returncode}) before {what}:\n{log.read_text()[-3000:]}"
            )
        time.sleep(0.05)
    raise AssertionError(f"no {what} within {timeout_s:g} s:\n{log.read_text()[-3000:]}")


def test_a_phone_unplugged_mid_run_that_does_not_return_is_finished_on_its_stand_in_board(
    adb_lab,
    board,
    tmp_path,
):
    ids = _ids()
    inv = tmp_path / "devices.yaml"
    pi = board.entry("pi-lab", tmp_path / "board", fallback_for=[LOST])
    inv.write_text(json.dumps({"adb_servers": [f"127.0.0.1:{adb_lab.servers[1].port}"], "devices": [pi]}))
    out = tmp_path / "runs"
    args = ["run", "--devices", "all", "--inventory", str(inv), "--modality", "text", "--limit", str(LIMIT),
            "--max-output-tokens", "6", "--sample-timeout", "60", "--fallback-wait-s", "3", "--out", str(out)]  # fmt: skip
    faults = adb_lab.device_root(LOST_LABEL) / "local" / "tmp" / "edgefarm-lab-faults"
    faults.parent.mkdir(parents=True, exist_ok=True)
    faults.write_text("sleep 1.5\n")  # a slow phone: still busy when it is unplugged
    log = tmp_path / "run.log"
    env = adb_lab.env(COLUMNS="200", EDGEFARM_PHONE_RUNNER="upstream")  # the `sleep` fault slows its stand-in
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
                adb_lab.phones[LOST_LABEL].vanish()  # the cable comes out, and stays out
                rc = proc.wait(timeout=180)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        text = log.read_text()
        assert rc == 0, text[-3000:]  # every sample of every phone has its row
        assert f"{LOST} was lost: waiting up to 3 s" in text and "pi-lab stands in" in text, text[-3000:]

        phone_rows = _jsonl(run_dir / "devices" / LOST / "results.jsonl")
        assert [r["id"] for r in phone_rows] == ids  # nothing lost, nothing twice, in order
        k = sum(1 for r in phone_rows if not r["stood_in_for"])
        assert 1 <= k < LIMIT, phone_rows
        assert all(r["stood_in_for"] == LOST for r in phone_rows[k:]) and all(
            r["status"] == "ok" for r in phone_rows
        )
        stood = _jsonl(run_dir / "devices" / f"pi-lab-for-{LOST}" / "results.jsonl")
        assert [r["id"] for r in stood] == ids[k:]  # the board ran exactly what the phone had not
        run = json.loads((run_dir / "run.json").read_text())
        (s,) = run["stand_ins"]
        assert (
            s["phone"] == LOST
            and s["board"] == "pi-lab"
            and s["completed"]
            and s["reason"].startswith("lost")
        )
        on_board = tmp_path / "board" / "runs" / f"{run['run_id']}-for-{LOST}" / "pi-lab" / "job" / "results.jsonl"
        assert [r["id"] for r in _jsonl(on_board)] == ids[k:]  # ran once on the board, own job folder

        report = json.loads((run_dir / "report.json").read_text())
        rows = {d["device"]: d for d in report["devices"]}
        assert rows[LOST]["samples"] == LIMIT and rows[LOST]["stand_in"] == f"pi-lab ran {LIMIT - k}"
        assert (
            LOST in rows[LOST]["error"] and "fix:" in rows[LOST]["error"]
        )  # what happened to the phone stays
        assert rows["pi-lab"]["samples"] == LIMIT + (LIMIT - k)  # its own run + what it stood in for
        assert rows["pi-lab"]["stand_in"] == f"for {LOST}: {LIMIT - k}"
        for n, sample in enumerate(report["samples"]):
            assert sample["cells"][LOST]["stood_in"] is (n >= k), (n, sample["cells"][LOST])
        summary = json.loads((run_dir / "devices" / LOST / "report.json").read_text())["summary"]
        assert summary["total_scored"] == LIMIT and summary["skipped"] == []
        md, html = (run_dir / "report.md").read_text(), (run_dir / "report.html").read_text()
        assert md.count("(stand-in)") == LIMIT - k and html.count("<i>(stand-in)</i>") == LIMIT - k
        assert f"pi-lab ran {LIMIT - k}" in md and f"pi-lab ran {LIMIT - k}" in html
        for fmt, mark in (("md", "(stand-in)"), ("term", f"stand-in: pi-lab ran {LIMIT - k}")):
            again = edgefarm("report", str(run_dir), "--format", fmt)
            assert again.returncode == 0 and mark in again.stdout, (fmt, again.stdout[-2000:], again.stderr)
        for fmt in ("csv", "jsonl"):  # one row per device and sample: the phone's stand-in rows say so
            again = edgefarm("report", str(run_dir), "--format", fmt)
            assert again.returncode == 0, again.stderr
            lines = [ln for ln in again.stdout.splitlines() if LOST in ln and "pi-lab" not in ln]
            assert sum(("True" in ln or "true" in ln) for ln in lines) >= LIMIT - k, (fmt, lines)
    finally:
        faults.unlink(missing_ok=True)
        adb_lab.come_back(LOST_LABEL)  # the lab is shared: leave every phone attached


def test_a_lost_phone_that_comes_back_within_the_wait_finishes_its_own_samples(
    adb_lab,
    board,
    tmp_path,
):
    ids = _ids()
    inv = tmp_path / "devices.yaml"
    pi = board.entry("pi-lab", tmp_path / "board", fallback_for=[LOST])
    inv.write_text(json.dumps({"devices": [pi]}))
    out = tmp_path / "runs"
    args = ["run", "--devices", "all", "--inventory", str(inv), "--modality", "text", "--limit", str(LIMIT),
            "--max-output-tokens", "6", "--sample-timeout", "60", "--fallback-wait-s", "60", "--out", str(out)]  # fmt: skip
    faults = adb_lab.device_root(LOST_LABEL) / "local" / "tmp" / "edgefarm-lab-faults"
    faults.parent.mkdir(parents=True, exist_ok=True)
    faults.write_text("sleep 1.5\n")
    log = tmp_path / "run.log"
    env = adb_lab.env(COLUMNS="200", EDGEFARM_PHONE_RUNNER="upstream")  # the `sleep` fault slows its stand-in
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
                _wait_for(
                    "the wait for the lost phone", lambda: "waiting up to 60 s" in log.read_text(), proc, log
                )
                faults.unlink()
                adb_lab.come_back(LOST_LABEL)  # plugged back in: it finishes its own samples
                rc = proc.wait(timeout=180)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        text = log.read_text()
        assert rc == 0, text[-3000:]
        assert f"{LOST} is back" in text and "stands in" not in text, text[-3000:]
        rows = _jsonl(run_dir / "devices" / LOST / "results.jsonl")
        assert [r["id"] for r in rows] == ids and all(
            r["status"] == "ok" and not r["stood_in_for"] for r in rows
        )
        assert "stand_ins" not in json.loads((run_dir / "run.json").read_text())
        assert not (run_dir / "devices" / f"pi-lab-for-{LOST}").exists()
        phone = {d["device"]: d for d in json.loads((run_dir / "report.json").read_text())["devices"]}[LOST]
        assert phone["error"] == "" and phone["stand_in"] == "" and phone["samples"] == LIMIT
    finally:
        faults.unlink(missing_ok=True)
        adb_lab.come_back(LOST_LABEL)
