"""The runner's main loop as a real process, on a stand-in engine: its protocol lines, the run stamp in
READY, and the single watchdog ending a run with exactly one timeout row and exit 124."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from android_runner.contract import JobItem, JobPart, read_results
from android_runner.litert_runner import runtime_identity
from android_runner.settings import SETTINGS_FILE, RunnerSettings
from android_runner.status import TIMEOUT_EXIT

REPO = Path(__file__).resolve().parents[3]

# The real main() with LiteRtRunner swapped for an engine that answers at once, or hangs on "slow"
# (a runtime call Python cannot interrupt).
STUB = f"""
import sys, time
sys.path.insert(0, {str(REPO)!r})
from android_runner import litert_runner
from android_runner.contract import SampleResult

class StandIn:
    def __init__(self, *args):
        self.init_ms, self.vision, self.audio, self.power = 1.5, False, False, None

    def bind_job(self, job_dir):
        self.job_dir = job_dir

    def run(self, item, memory, log):
        memory.reset()
        if item.id == "slow":
            time.sleep(60)
        return SampleResult(id=item.id, status="ok", output="answer " + item.id)

litert_runner.LiteRtRunner = StandIn
sys.exit(litert_runner.main(sys.argv[1:]))
"""


def _run(tmp_path: Path, ids: list[str]) -> tuple[subprocess.CompletedProcess, Path]:
    job = tmp_path / "job"
    job.mkdir(exist_ok=True)
    items = [JobItem(id=i, turns=((JobPart("text", text="hi"),),)) for i in ids]
    (job / "job.jsonl").write_text("".join(item.to_json() + "\n" for item in items))  # as write_bundle does
    script = tmp_path / "stub_runner.py"
    script.write_text(STUB)
    (job / SETTINGS_FILE).write_text(RunnerSettings(model="m.litertlm", cache_dir=str(tmp_path / "cache"),
                                                    sample_timeout_ms=500).render())  # fmt: skip
    argv = [sys.executable, str(script), "--job", str(job)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False), job


def _protocol(stdout: str) -> list[tuple[str, object]]:
    lines = [ln.split(" ", 2) for ln in stdout.splitlines() if ln.startswith("EDGEFARM ")]
    return [(kind, json.loads(payload)) for _, kind, payload in lines]


def test_a_hung_sample_is_one_timeout_row_exit_124_and_the_rerun_runs_the_rest(tmp_path: Path):
    p, job = _run(tmp_path, ["a", "slow", "b"])
    assert p.returncode == TIMEOUT_EXIT, p.stderr
    rows = list(read_results(str(job / "results.jsonl")))
    assert [(r.id, r.status) for r in rows] == [("a", "ok"), ("slow", "timeout")]
    assert rows[1].exit_code == TIMEOUT_EXIT and rows[1].error == "no answer within 0.5 s (sample timeout)"
    results = [data["id"] for kind, data in _protocol(p.stdout) if kind == "RESULT"]
    assert results == ["a", "slow"]  # each recorded once, by the main loop or by the watchdog
    p, _ = _run(tmp_path, ["a", "slow", "b"])  # the host restarts the runner for the samples left
    assert p.returncode == 0, p.stderr
    assert [r.id for r in read_results(str(job / "results.jsonl"))] == ["a", "slow", "b"]
    assert [kind for kind, _ in _protocol(p.stdout)] == ["READY", "BEGIN", "RESULT", "DONE"]


def test_ready_carries_the_runtime_identity(tmp_path: Path):
    p, _ = _run(tmp_path, ["a"])
    assert p.returncode == 0, p.stderr
    ((kind, ready), *_) = _protocol(p.stdout)
    assert kind == "READY" and ready["init_ms"] == 1.5 and ready["pending"] == 1
    assert ready["runtime_version"] == metadata.version("litert-lm-api")
    assert ready["runtime_lib"].endswith("/liblitert-lm.so") and Path(ready["runtime_lib"]).is_file()
    assert re.fullmatch(r"[0-9a-f]{64}", ready["runtime_sha256"])
    assert {k: ready[k] for k in ("runtime_version", "runtime_lib", "runtime_sha256")} == runtime_identity()


def test_runtime_identity_agrees_with_importlib_metadata():
    """The runner reads the dist-info folder itself (no importlib.metadata import at its start)."""
    lib = next(f for f in metadata.files("litert-lm-api") if f.name == "liblitert-lm.so")
    value = lib.hash.value
    assert runtime_identity() == {
        "runtime_version": metadata.version("litert-lm-api"),
        "runtime_lib": str(Path(lib.locate()).resolve()),
        "runtime_sha256": base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).hex(),
    }
    assert runtime_identity("LiteRT_LM.api") == runtime_identity()  # the name is normalised as pip does


def test_runtime_identity_of_an_install_without_the_library_row(tmp_path: Path, monkeypatch):
    info = tmp_path / "litert_lm_api-9.9.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: litert-lm-api\nVersion: 9.9\n")
    (info / "RECORD").write_text("litert_lm/__init__.py,sha256=AAAA,10\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    assert runtime_identity() == {"runtime_version": "9.9", "runtime_lib": "", "runtime_sha256": ""}
    (info / "RECORD").write_text('"litert_lm/liblitert-lm.so",md5=AAAA,10\n')  # not a sha256: not quoted
    assert runtime_identity()["runtime_lib"] == str(tmp_path / "litert_lm/liblitert-lm.so")
    assert runtime_identity()["runtime_sha256"] == ""


def test_runtime_identity_of_a_missing_runtime_is_empty():
    assert runtime_identity("no-such-distribution-xyz") == {
        "runtime_version": "",
        "runtime_lib": "",
        "runtime_sha256": "",
    }
