"""The user's story: three phones on USB, one of them a 32-bit phone no runner is built for.

`edgefarm doctor` names it, with the fix, and says the other two are ready; `edgefarm run --devices all`
runs the other two and says why the third did not start (run.json, the report's problems); no paired
verdict involves the phone that ran nothing, and a run of that phone alone prints no comparison and
exits non-zero."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .sandbox import GALAXY_J5

REPO = Path(__file__).resolve().parents[3]
OLD = "samsung-sm-j500f"  # as discovered: no marketing name, so manufacturer + model
READY = ("google-pixel-8", "samsung-sm-s921b")  # the lab's two phones on farm host 1 (the local server)


def edgefarm(lab, *args: str) -> subprocess.CompletedProcess:
    env = lab.env(COLUMNS="250")  # the native runner, built for this host's ABI (x86_64 in the lab)
    env.pop("EDGEFARM_INVENTORY", None)
    return subprocess.run([sys.executable, "-m", "orchestrator", *args], check=False, capture_output=True, text=True,
                          timeout=300, env=env, cwd=REPO)  # fmt: skip


def test_doctor_names_the_phone_without_a_runner_and_run_all_runs_the_other_two(adb_lab, tmp_path):
    adb_lab.add_phone("j5", GALAXY_J5, server=0)
    try:
        p = edgefarm(adb_lab, "doctor", "--devices", "all")
        assert p.returncode == 3, p.stdout + p.stderr[-2000:]
        text = " ".join(p.stdout.split())
        assert f"{OLD} (adb {adb_lab.serials['j5']}, armeabi-v7a): NOT READY" in text, p.stdout
        assert "FAIL runner no runner for armeabi-v7a/armeabi: the native runner" in text, p.stdout
        assert "built for x86_64" in text and "fix: edgefarm's phone runners are built for arm64-v8a" in text
        assert "2 of 3 device(s) ready; not ready: samsung-sm-j500f" in text, p.stdout
        p = edgefarm(adb_lab, "doctor", "--devices", "all", "--json")
        found = {d["name"]: d for d in json.loads(p.stdout)["devices"]}
        assert set(found) == {*READY, OLD} and [found[n]["ready"] for n in READY] == [True, True]
        checks = {c["need"]: c for c in found[OLD]["checks"]}
        assert (
            not checks["runner"]["ok"]
            and checks["runner"]["blocks"]
            and "runner_path" in checks["runner"]["fix"]
        )
        for name in READY:  # what a run needs there, all of it checked
            assert {c["need"] for c in found[name]["checks"]} >= {"authorization", "runner", "runtime", "storage",
                                                                   "memory", "power", "thermal"}  # fmt: skip

        out = tmp_path / "runs"
        p = edgefarm(adb_lab, "run", "--devices", "all", "--modality", "text", "--limit", "3",
                     "--max-output-tokens", "8", "--out", str(out))  # fmt: skip
        assert p.returncode == 0, p.stderr[-3000:]
        said = " ".join(p.stderr.split())
        assert f"not used: {OLD} (not ready): runner: no runner for armeabi-v7a/armeabi" in said, said[-3000:]
        (run_dir,) = [d for d in out.iterdir() if d.is_dir()]
        run = json.loads((run_dir / "run.json").read_text())
        assert sorted(run["devices"]) == sorted(READY)
        (refused,) = [u for u in run["unusable"] if u["name"] == OLD]
        assert refused["state"] == "not ready" and "fix: edgefarm's phone runners" in refused["problem"]
        assert not (run_dir / "devices" / OLD).exists()  # never started: nothing pushed, no folder
        assert not (adb_lab.device_root("j5") / "local" / "tmp" / "edgefarm").exists()
        report = json.loads((run_dir / "report.json").read_text())
        assert sorted(d["device"] for d in report["devices"]) == sorted(READY), report["devices"]
        assert all(d["samples"] == 3 for d in report["devices"])
        # one pair, of the two that ran: none with the phone that ran nothing
        assert [{x["a"], x["b"]} for x in report["paired"]] == [set(READY)]
        assert f"{OLD} not used (not ready)" in (run_dir / "report.md").read_text()

        p = edgefarm(adb_lab, "run", "--devices", OLD, "--limit", "2", "--out", str(tmp_path / "alone"))
        assert p.returncode == 3, p.stderr[-3000:]
        assert "no device ran" in p.stderr and "Speed-up" not in p.stdout
        (alone,) = [d for d in (tmp_path / "alone").iterdir() if d.is_dir()]
        report = json.loads((alone / "report.json").read_text())
        assert report["devices"] == [] and report["paired"] == [] and report["baseline"] == ""
    finally:
        adb_lab.remove_phone("j5")
