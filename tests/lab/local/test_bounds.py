"""Issue 24, "nothing hangs, nothing leaks": scoring bounded in time, through the real CLI.

A dataset regex that backtracks catastrophically (`(\\w+\\s?)*` against 34 letters and a `!`) hung
`edgefarm score` and the scoring inside `edgefarm run` for ever, past two Ctrl-Cs. Each test here
hung or passed silently on the main of that day.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from .conftest import REPO, edgefarm

HANGS_RE = r"(\w+\s?)*"  # the pattern: passes `dataset check`, hangs Python's `re`
HANGS_REGEX = r"(a|aa)+$"  # hangs even the `regex` engine's smarter matcher: only its time limit ends it


def rows_file(tmp_path: Path, *patterns: str) -> Path:
    meta = tmp_path / "metadata.jsonl"
    rows = [
        {"test_id": f"STR-{i}", "modality": "structured_output", "task": "format", "prompt": "Say a word.",
         "reference": "word", "constraint_type": "regex", "pattern": p}
        for i, p in enumerate(patterns, start=1)
    ]  # fmt: skip
    meta.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return meta


def test_a_backtracking_pattern_is_warned_about_and_scoring_finishes(tmp_path: Path):
    meta = rows_file(tmp_path, HANGS_RE, r"\d+")
    p = edgefarm("dataset", "check", str(meta))
    assert p.returncode == 0, p.stdout + p.stderr  # a warning, not a problem
    assert f"warning: {meta}:1 STR-1 field 'pattern'" in p.stdout
    assert "nested quantifier" in p.stdout and "STR-2" not in p.stdout

    results = tmp_path / "results.json"
    results.write_text(json.dumps({"STR-1": "a" * 34 + "!", "STR-2": "42"}))
    p = edgefarm("score", str(results), "--dataset", str(meta), timeout=300)  # hung for ever before
    assert p.returncode == 0, p.stderr
    rows = {r["test_id"]: r for r in json.loads((tmp_path / "report.json").read_text())["samples"]}
    assert rows["STR-1"]["format_valid"] is False and "does not fully match" in rows["STR-1"]["failed_check"]
    assert rows["STR-2"]["format_valid"] is True


def test_a_pattern_over_the_time_limit_is_that_samples_scoring_error(tmp_path: Path):
    meta = rows_file(tmp_path, HANGS_REGEX, r"\d+")
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"STR-1": "a" * 60 + "!", "STR-2": "42"}))
    p = edgefarm("score", str(results), "--dataset", str(meta), timeout=300)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    rows = {r["test_id"]: r for r in json.loads((tmp_path / "report.json").read_text())["samples"]}
    error = rows["STR-1"]["scoring_error"]
    assert "RegexTimeout" in error and "did not finish within 1 s" in error and "(a|aa)+$" in error
    assert rows["STR-1"]["passed"] is False and rows["STR-2"]["format_valid"] is True
    assert "STR-1: RegexTimeout" in p.stderr  # the summary names the row


def _as_from_a_terminal() -> None:
    """The child gets Ctrl-C as a shell started from a terminal would: SIGINT neither ignored nor
    blocked. A child inherits both, and in the parallel suite the worker's own state leaked into it
    once (the child never saw the signal and scored all 40 patterns): Python keeps an inherited ignore."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _wait_until_matching(child: subprocess.Popen, timeout_s: float = 120.0) -> None:
    """Until the child has loaded the `regex` engine (its scorer's imports are done), then 3 s more:
    into the patterns (each takes its 1 s limit). A fixed sleep fired during the imports on a loaded
    machine, where a library's bare `except:` can swallow the KeyboardInterrupt and scoring runs on."""
    deadline = time.monotonic() + timeout_s
    maps = Path(f"/proc/{child.pid}/maps")
    while time.monotonic() < deadline and child.poll() is None:
        if "_regex" in maps.read_text(errors="replace"):
            time.sleep(3)
            return
        time.sleep(0.1)
    raise AssertionError(f"`edgefarm score` did not load the regex engine within {timeout_s:g} s")


def test_ctrl_c_stops_scoring_of_patterns_that_hang(tmp_path: Path):
    meta = rows_file(tmp_path, *[HANGS_REGEX] * 40)
    results = tmp_path / "results.json"
    results.write_text(json.dumps({f"STR-{i}": "a" * 60 + "!" for i in range(1, 41)}))
    child = subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "score", str(results), "--dataset", str(meta)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, preexec_fn=_as_from_a_terminal,  # noqa: PLW1509
    )  # fmt: skip
    try:
        _wait_until_matching(child)
        assert child.poll() is None, child.communicate()
        child.send_signal(signal.SIGINT)
        _out, err = child.communicate(timeout=120)  # one bounded match at most, then it stops
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    state = [ln for ln in Path("/proc/self/status").read_text().splitlines() if ln.startswith(("SigBlk", "SigIgn"))]
    assert child.returncode != 0 and "Traceback" not in err, (state, err)
    assert not (tmp_path / "report.json").exists()


def test_scoring_inside_a_run_is_bounded_and_resume_finishes(tmp_path: Path, run_here):
    """The same pattern scored inside `edgefarm run` (as each answer arrives, and at the end) hung the
    run for ever, and `--resume` again; now the sample is a scoring error and the run ends."""
    data = tmp_path / "set"
    data.mkdir()
    rows_file(data, HANGS_REGEX, r"\d+")
    env = {"EDGEFARM_TEST_FAULTS": "ANSWER=STR-1", "EDGEFARM_TEST_ANSWER": "a" * 60 + "!"}
    p, run_dir = run_here("--dataset", str(data), "--max-output-tokens", "4", faulty=True, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "Traceback" not in p.stderr
    report = json.loads((run_dir / "devices" / "this-host" / "report.json").read_text())
    rows = {r["test_id"]: r for r in report["samples"]}
    assert "RegexTimeout" in rows["STR-1"]["scoring_error"] and rows["STR-1"]["passed"] is False
    assert "scoring_error" not in rows["STR-2"]
    again = run_here("--resume", str(run_dir), faulty=True, env=env).proc
    assert again.returncode == 0, again.stderr[-3000:]
