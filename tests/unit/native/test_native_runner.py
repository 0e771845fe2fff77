"""The native runner on its own, under AddressSanitizer and UBSan, against the fake runtime library:
hostile job files, hostile answers, a watchdog during and after the answer, a slow hook, a library that
is not the pinned one. Every run must end with its documented exit code and clean sanitizer output."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from android_runner.contract import OUTPUT_MAX_BYTES
from android_runner.settings import RunnerSettings

EXIT_USAGE, EXIT_RUNTIME, EXIT_NOMEM, EXIT_TIMEOUT = 2, 3, 70, 124
ENV = {
    "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0:exitcode=99",
    "UBSAN_OPTIONS": "print_stacktrace=1:exitcode=98",
}


def job(*samples: list[str] | str, sampler: str = "1 0.95 1.0 0") -> bytes:
    """A job file: each sample is its message text(s)."""
    out = bytearray(b"EFJOB 1\n")
    for n, turns in enumerate(samples, 1):
        out += f"S {n}\nP {sampler}\nO 16\n".encode()
        for text in [turns] if isinstance(turns, str) else turns:
            data = json.dumps({"role": "user", "content": text}).encode()
            out += b"M %d\n" % len(data) + data + b"\n"
        out += b"E\n"
    return bytes(out)


def settings_text(model_file: Path, lib_file: Path, changed: dict[str, str | None] | None = None) -> str:
    """The settings file the host would render (android_runner/settings.py), with some lines' values
    changed as raw text (None: the line left out; a key it has not: added at the end)."""
    changed = dict(changed or {})
    out = []
    for line in (
        RunnerSettings(model=str(model_file), cache_dir=":nocache", lib=str(lib_file)).render().splitlines()
    ):
        key = line.partition("=")[0]
        if key not in changed:
            out.append(line)
        elif changed[key] is not None:
            out.append(f"{key}={changed[key]}")
        changed.pop(key, None)
    out += [f"{k}={v}" for k, v in changed.items() if v is not None]
    return "\n".join(out) + "\n"


def run(build, tmp: Path, job_bytes: bytes, *extra: str, lib: Path | None = None, hook: str | None = None,
        timeout_s: float = 60, env: dict[str, str] | None = None,
        settings: dict[str, str | None] | None = None) -> tuple[int, list[tuple[str, str]], list[dict], str]:  # fmt: skip
    """Run the runner; (exit code, protocol lines as (kind, rest), results file rows, stderr). `settings`:
    values of its settings file changed (raw text)."""
    (tmp / "job.conv").write_bytes(job_bytes)
    (tmp / "settings").write_text(settings_text(tmp / "model.litertlm", lib or build.lib, settings))
    argv = [str(build.runner), "--settings", str(tmp / "settings"),
            "--job", str(tmp / "job.conv"), "--results", str(tmp / "results.jsonl"), *extra]  # fmt: skip
    if hook is not None:
        (tmp / "hook.sh").write_text(hook)
        argv += ["--hook", str(tmp / "hook.sh")]
    p = subprocess.run(
        argv, capture_output=True, timeout=timeout_s, check=False, env=dict(os.environ, **ENV, **(env or {}))
    )
    assert "Sanitizer" not in p.stderr.decode(errors="replace"), p.stderr.decode(errors="replace")[-3000:]
    lines = []
    for raw in p.stdout.decode("utf-8").splitlines():
        assert raw.startswith("EDGEFARM "), raw  # nothing but protocol lines on stdout
        kind, _, rest = raw[9:].partition(" ")
        lines.append((kind, rest))
    results = tmp / "results.jsonl"
    rows = (
        [json.loads(x) for x in results.read_text("utf-8").splitlines() if x.strip()]
        if results.exists()
        else []
    )
    return p.returncode, lines, rows, p.stderr.decode(errors="replace")


def fatal_of(lines: list[tuple[str, str]]) -> dict:
    fatal = [json.loads(rest) for kind, rest in lines if kind == "FATAL"]
    assert len(fatal) == 1, lines
    assert set(fatal[0]) == {"error", "fix", "exit_code"}, fatal[0]
    return fatal[0]


def results_of(lines: list[tuple[str, str]]) -> list[dict]:
    return [json.loads(rest) for kind, rest in lines if kind == "RESULT"]


def test_a_plain_job_answers_each_sample_once_with_the_figures_fields(native_build, tmp_path):
    rc, lines, rows, _ = run(native_build, tmp_path, job("hello", ["one", "two"]))
    assert rc == 0, lines
    assert [k for k, _ in lines] == ["READY", "BEGIN", "RESULT", "BEGIN", "RESULT", "DONE"]
    assert rows == results_of(lines)
    for r in rows:
        assert r["status"] == "ok" and json.loads(r["response"])["content"][0]["text"] == "fake answer"
        assert (
            r["runner"] == "native"
            and r["peak_method"] in ("hwm_reset", "sampled")
            and r["mem_sample_ms"] == 20
        )
        assert (
            r["invalid_utf8_bytes"] == 0 and r["output_truncated_bytes"] == 0 and "runtime_override" not in r
        )
    assert len(rows[1]["turns"]) == 2
    # a rerun resumes after what the results file holds: nothing left to do
    rc, lines, rows2, _ = run(native_build, tmp_path, job("hello", ["one", "two"]))
    assert rc == 0 and [k for k, _ in lines] == ["READY", "DONE"] and rows2 == rows


MALFORMED = {
    "no header": b"S 1\nM 2\n{}\nE\n",
    "unknown record": b"EFJOB 1\nS 1\nX what\nM 2\n{}\nE\n",
    "length past the end": b"EFJOB 1\nS 1\nM 999\n{}\nE\n",
    "negative length": b"EFJOB 1\nS 1\nM -1\n{}\nE\n",
    "length not a number": b"EFJOB 1\nS 1\nM 2x\n{}\nE\n",
    "sampler words": b"EFJOB 1\nS 1\nP 1 nope 1.0 0\nM 2\n{}\nE\n",
    "sampler top_p over 1": b"EFJOB 1\nS 1\nP 1 1.5 1.0 0\nM 2\n{}\nE\n",
    "sampler seed over int32": b"EFJOB 1\nS 1\nP 1 0.9 1.0 99999999999\nM 2\n{}\nE\n",
    "max output tokens negative": b"EFJOB 1\nS 1\nO -3\nM 2\n{}\nE\n",
    "not closed": b"EFJOB 1\nS 1\nM 2\n{}\n",
    "no message": b"EFJOB 1\nS 1\nE\n",
    "NUL in a field": b"EFJOB 1\nS 1\nM 2\n{\0\nE\n",
    "record outside a sample": b"EFJOB 1\nM 2\n{}\n",
    "no final newline": b"EFJOB 1\nS 1\nM 2\n{}\nE",
    "bench line words": b"EFJOB 1\nS 1\nB 16 8 0 0\nE\n",
    "bench prompt of 0 tokens": b"EFJOB 1\nS 1\nB 0 8 0 0 cpu\nE\n",
    "bench backend unknown": b"EFJOB 1\nS 1\nB 16 8 0 0 tpu\nE\n",
    "bench depth over the bound": b"EFJOB 1\nS 1\nB 16 8 200000 0 cpu\nE\n",
    "bench sample with a message": b"EFJOB 1\nS 1\nB 16 8 0 0 cpu\nM 2\n{}\nE\n",
    "stream record with words": b"EFJOB 1\nS 1\nM 2\n{}\nA yes\nE\n",
    "bench sample streamed": b"EFJOB 1\nS 1\nB 16 8 0 0 cpu\nA\nE\n",
    "empty": b"",
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_job_file_is_one_json_fatal_line_and_exit_2(native_build, tmp_path, case):
    rc, lines, rows, _ = run(native_build, tmp_path, MALFORMED[case])
    assert rc == EXIT_USAGE, (case, lines)
    f = fatal_of(lines)
    assert f["exit_code"] == EXIT_USAGE and "job file" in f["error"] and rows == []


@pytest.mark.parametrize("n", ["-5", "0", "1000001", "99999999999999999999", "1e3", " 7", "0x10"])
def test_a_sample_number_out_of_range_is_refused(native_build, tmp_path, n):
    rc, lines, _, _ = run(native_build, tmp_path, f"EFJOB 1\nS {n}\nM 2\n{{}}\nE\n".encode())
    assert rc == EXIT_USAGE and "sample number" in fatal_of(lines)["error"]


def test_a_repeated_sample_number_is_refused(native_build, tmp_path):
    rc, lines, _, _ = run(native_build, tmp_path, b"EFJOB 1\nS 3\nM 2\n{}\nE\nS 3\nM 2\n{}\nE\n")
    assert rc == EXIT_USAGE and "repeated" in fatal_of(lines)["error"]


@pytest.mark.parametrize("flag,value", [("--hook-timeout-s", "0"), ("--hook-timeout-s", "nan"), ("--log-level", "-1"),
                                        ("--bogus", "1"), ("--threads", "2")])  # fmt: skip
def test_a_bad_option_is_one_json_fatal_line_and_exit_2(native_build, tmp_path, flag, value):
    """--threads is a setting, not an option: the settings file is the one channel of settings."""
    rc, lines, _, _ = run(native_build, tmp_path, job("hi"), flag, value)
    assert rc == EXIT_USAGE
    assert flag in fatal_of(lines)["error"] or "unknown" in fatal_of(lines)["error"]


@pytest.mark.parametrize("key,value,said", [
    ("sample_timeout_ms", "abc", "sample_timeout_ms must be"), ("sample_timeout_ms", "-1", "sample_timeout_ms must be"),
    ("sample_timeout_ms", "0", "in 1..86400000"), ("sample_timeout_ms", "1.5", "sample_timeout_ms must be"),
    ("threads", "257", "threads must be a whole number in 0..256"), ("max_num_tokens", "12x", "max_num_tokens"),
    ("cooldown_mc", "120001", "cooldown_mc"), ("allow_runtime", "2", "allow_runtime"),
    ("backend", "tpu", "cpu, gpu or npu"), ("vision_backend", "x", "cpu, gpu or npu"), ("model", "", "empty path"),
    ("threads", None, "no threads"), ("bogus", "1", "unknown key")])  # fmt: skip
def test_a_bad_settings_file_is_one_json_fatal_line_naming_its_line_and_exit_2(
    native_build, tmp_path, key, value, said
):
    rc, lines, rows, _ = run(native_build, tmp_path, job("hi"), settings={key: value})
    f = fatal_of(lines)
    assert rc == EXIT_USAGE and rows == [] and said in f["error"], f
    assert f"settings file {tmp_path / 'settings'} line " in f["error"] and "settings.py" in f["fix"]


def test_a_settings_file_without_its_header_or_given_twice_a_key_is_refused(native_build, tmp_path):
    text = settings_text(tmp_path / "m", native_build.lib)
    for bad, said in [(text.replace("EFSETTINGS 1", "EFSETTINGS 2"), "line 1: not a settings file"),
                      (text + "threads=2\n", "a key given twice"), (text.rstrip("\n"), "has no newline")]:  # fmt: skip
        (tmp_path / "s2").write_text(bad)
        rc, lines, _, _ = run(native_build, tmp_path, job("hi"), "--settings", str(tmp_path / "s2"))
        assert rc == EXIT_USAGE and said in fatal_of(lines)["error"], (said, lines)


def test_ready_says_the_settings_the_runtime_was_given_and_each_row_its_cap(native_build, tmp_path):
    rc, lines, rows, _ = run(native_build, tmp_path, job("hi"), settings={"threads": "3", "max_num_tokens": "512",
                                                                        "sample_timeout_ms": "4500", "backend": "gpu"})  # fmt: skip
    ready = json.loads(next(rest for kind, rest in lines if kind == "READY"))
    assert rc == 0 and ready["settings"] == {"backend": "gpu", "threads": 3, "max_num_tokens": 512,
                                             "sample_timeout_ms": 4500}  # fmt: skip
    assert rows[0]["max_output_tokens"] == 16  # the job's `O 16`


def test_ten_thousand_turns_are_all_sent(native_build, tmp_path):
    rc, lines, rows, _ = run(native_build, tmp_path, job([f"t{i}" for i in range(10_000)]), timeout_s=120)
    assert rc == 0, lines[-3:]
    assert rows[0]["status"] == "ok" and len(rows[0]["turns"]) == 10_000


def test_a_10_mb_answer_is_cut_at_the_cap_and_marked(native_build, tmp_path):
    size = 10 * 2**20
    rc, _lines, rows, _ = run(native_build, tmp_path, job(f"@big={size}"))
    assert rc == 0
    row = rows[0]
    assert row["status"] == "ok" and row["output_truncated_bytes"] > 0
    # the cap is on the answer's text (answer_text.py), not on the runtime's JSON reply around it
    assert json.loads(row["response"])["content"][0]["text"] == "a" * OUTPUT_MAX_BYTES
    assert row["output_truncated_bytes"] == size - OUTPUT_MAX_BYTES


def test_invalid_utf8_is_replaced_and_counted_and_control_characters_escaped(native_build, tmp_path):
    rc, _lines, rows, _ = run(native_build, tmp_path, job("@badutf8", "@ctrl"))
    assert rc == 0
    bad, ctrl = rows
    # the fake's answer: b"ok \xff then \xe2\x82 cut, \xed\xa0\x80 surrogate, \xc3\xa9 fine"
    expected = b"ok \xff then \xe2\x82 cut, \xed\xa0\x80 surrogate, \xc3\xa9 fine".decode("utf-8", "replace")
    assert json.loads(bad["response"])["content"][0]["text"] == expected  # the same text Python makes of it
    assert bad["invalid_utf8_bytes"] == 1 + 2 + 3
    # the fake puts them raw inside its JSON (the runtime escapes them): the row keeps them, escaped
    assert json.loads(ctrl["response"], strict=False)["content"][0]["text"] == "bell\x01 esc\x1b del\x7f"
    raw = (tmp_path / "results.jsonl").read_bytes()
    assert not any(c < 0x20 and c != 0x0A for c in raw) and b"\x7f" not in raw  # every control escaped


def test_a_failed_allocation_anywhere_is_one_json_line_and_exit_70(native_build, tmp_path):
    """Each of the runner's allocations in turn fails (EF_FAIL_ALLOC_AT=1, 2, ...) until a run needs
    fewer: every one ends with the one FATAL line, never a crash."""
    at = 0
    while True:
        at += 1
        (tmp_path / "results.jsonl").unlink(missing_ok=True)
        rc, lines, _, _ = run(native_build, tmp_path, job("hi", "again"), env={"EF_FAIL_ALLOC_AT": str(at)})
        if rc == 0:
            break
        assert rc == EXIT_NOMEM, (at, lines)
        assert fatal_of(lines)["error"] == "out of memory in the runner"
    assert at > 10  # the job parse, the results, every row: many places were tried


def test_the_watchdog_during_the_answer_writes_a_timeout_row(native_build, tmp_path):
    rc, _lines, rows, _ = run(
        native_build, tmp_path, job("@slow=30", "next"), settings={"sample_timeout_ms": "1000"}
    )
    assert rc == EXIT_TIMEOUT
    assert [r["status"] for r in rows] == ["timeout"] and rows[0]["n"] == 1 and rows[0]["runner"] == "native"
    # the driver restarts it: the timed-out sample is not run again, the next one is
    rc, _lines, rows, _ = run(
        native_build, tmp_path, job("@slow=30", "next"), settings={"sample_timeout_ms": "1000"}
    )
    assert rc == 0 and [r["status"] for r in rows] == ["timeout", "ok"]


SLOW_AFTER = 'case "$3" in after) sleep 4 ;; esac\n'


def test_a_deadline_passing_after_the_answer_keeps_the_answer(native_build, tmp_path):
    """The answer arrives within the deadline, the after-hook then sleeps past it: the row is ok."""
    rc, lines, rows, _ = run(
        native_build, tmp_path, job("@slow=0.2", "b"), settings={"sample_timeout_ms": "1500"}, hook=SLOW_AFTER
    )
    assert rc == 0, lines
    assert [r["status"] for r in rows] == ["ok", "ok"]
    assert json.loads(rows[0]["response"])["content"][0]["text"] == "fake answer"
    kinds = [k for k, _ in lines]
    assert kinds.index("RESULT") < kinds.index("BEGIN", 2)  # the row is out before the hook's sleep


def test_a_hook_past_its_own_limit_is_stopped_with_a_note_and_the_run_goes_on(native_build, tmp_path):
    hook = 'echo "EDGEFARM NOTE from the hook $3"\ncase "$3" in before) sleep 30 ;; esac\n'
    rc, lines, rows, _ = run(
        native_build, tmp_path, job("a"), "--hook-timeout-s", "1", hook=hook, timeout_s=40
    )
    assert rc == 0 and [r["status"] for r in rows] == ["ok"]
    notes = [rest for kind, rest in lines if kind == "NOTE"]
    assert "from the hook before" in notes and "from the hook after" in notes  # relayed, one line each
    assert any("before hook of sample 1 ran past its 1 s limit" in n for n in notes), notes


def test_a_runtime_error_is_that_samples_error_row(native_build, tmp_path):
    rc, _lines, rows, _ = run(native_build, tmp_path, job("@refuse", "fine"))
    assert rc == 0 and [r["status"] for r in rows] == ["error", "ok"]
    assert "Input token ids are too long" in rows[0]["error"] and rows[0]["response"] is None


def test_an_unloadable_model_is_one_json_fatal_line_and_exit_65(native_build, tmp_path):
    (tmp_path / "m").mkdir()
    rc, lines, _, _ = run(
        native_build, tmp_path / "m", job("a"), settings={"model": str(tmp_path / "unloadable.litertlm")}
    )
    assert rc == 65 and "not a model" in fatal_of(lines)["error"]


def test_a_library_that_is_not_the_pinned_one_is_refused_naming_both(native_build, tmp_path):
    rc, lines, rows, _ = run(native_build, tmp_path, job("a"), lib=native_build.other_lib)
    assert rc == EXIT_RUNTIME and rows == []
    f = fatal_of(lines)
    assert "not the pinned one" in f["error"] and native_build.lib_sha256 in f["error"]
    assert str(native_build.other_lib) in f["error"] and "EDGEFARM_ALLOW_RUNTIME" in f["fix"]


def test_a_wrong_version_stamp_is_refused_too(native_build, tmp_path):
    lib = tmp_path / "v" / "liblitert-lm.so"
    lib.parent.mkdir()
    lib.write_bytes(native_build.lib.read_bytes())
    (lib.parent / "VERSION").write_text("litert-lm-api 0.17.0 (older)\n")
    rc, lines, _, _ = run(native_build, tmp_path, job("a"), lib=lib)
    assert rc == EXIT_RUNTIME and "version 0.17.0" in fatal_of(lines)["error"]


def test_allow_runtime_runs_it_and_every_row_names_the_library(native_build, tmp_path):
    rc, lines, rows, _ = run(
        native_build, tmp_path, job("a", "b"), settings={"allow_runtime": "1"}, lib=native_build.other_lib
    )
    assert rc == 0 and [r["status"] for r in rows] == ["ok", "ok"]
    for r in rows:
        assert str(native_build.other_lib) in r["runtime_override"] and "sha256 " in r["runtime_override"]
    assert any("not the pinned one" in rest for kind, rest in lines if kind == "NOTE")


def test_a_full_results_file_is_said_and_the_row_still_reaches_stdout(native_build, tmp_path):
    if not Path("/dev/full").exists():
        pytest.fail("/dev/full is missing: this test needs it to see a write refused")
    rc, lines, _rows, _ = run(native_build, tmp_path, job("a"), "--results", "/dev/full")
    assert rc == 0 and [r["status"] for r in results_of(lines)] == ["ok"]
    assert any("results file refused sample 1" in rest for kind, rest in lines if kind == "NOTE"), lines


def test_a_library_rewritten_with_its_size_mtime_and_inode_restored_is_refused(native_build, tmp_path):
    """The pin check hashes the library at every start: one byte changed in place (same inode, same size,
    the mtime put back) is refused, and a hash remembered beside it (an older runner's
    .edgefarm-sha256, naming the pinned sha256 for these very size, mtime and inode) is not trusted."""
    lib = tmp_path / "l" / "liblitert-lm.so"
    lib.parent.mkdir()
    lib.write_bytes(native_build.lib.read_bytes())
    (lib.parent / "VERSION").write_text(native_build.lib.with_name("VERSION").read_text())
    rc, _, _, _ = run(native_build, tmp_path, job("a"), lib=lib)
    assert rc == 0
    before = lib.stat()
    (lib.parent / ".edgefarm-sha256").write_text(
        f"{before.st_size} {before.st_mtime_ns // 10**9} {before.st_mtime_ns % 10**9} {before.st_ino} "
        f"{native_build.lib_sha256}"
    )
    with open(lib, "r+b") as f:  # in place: the inode stays
        f.seek(before.st_size // 2)
        byte = f.read(1)
        f.seek(before.st_size // 2)
        f.write(bytes([byte[0] ^ 0xFF]))
    os.utime(lib, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = lib.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )
    (tmp_path / "results.jsonl").unlink()
    rc, lines, rows, _ = run(native_build, tmp_path, job("a"), lib=lib)
    assert rc == EXIT_RUNTIME and "not the pinned one" in fatal_of(lines)["error"] and rows == []


def test_a_fatal_line_keeps_valid_utf8_and_escapes_what_json_needs(native_build, tmp_path):
    """FATAL goes through the JSON writer: a job path with a quote, a backslash and non-ASCII letters
    comes back exactly (not as U+FFFD per byte); an invalid byte is one U+FFFD. (No such job file: the
    runner's first FATAL names it.)"""
    name = 'jöb "ü" \\ 東.conv'
    (tmp_path / "settings").write_text(settings_text(tmp_path / "m", native_build.lib))
    argv = [str(native_build.runner), "--settings", str(tmp_path / "settings"),
            "--job", str(tmp_path / name), "--results", str(tmp_path / "r.jsonl")]  # fmt: skip
    p = subprocess.run(argv, capture_output=True, timeout=60, check=False, env=dict(os.environ, **ENV))
    (line,) = p.stdout.decode("utf-8").splitlines()
    f = json.loads(line.removeprefix("EDGEFARM FATAL "))
    assert p.returncode == EXIT_USAGE and f"cannot read the job file {tmp_path / name} (" in f["error"]
    assert f["fix"] == "rerun: the host pushes the job file again" and f["exit_code"] == EXIT_USAGE
    bad = os.fsencode(tmp_path) + b"/job\xff.conv"
    p = subprocess.run([*argv[:4], bad, *argv[5:]], capture_output=True, timeout=60, check=False,
                       env=dict(os.environ, **ENV))  # fmt: skip
    f = json.loads(p.stdout.decode("utf-8").removeprefix("EDGEFARM FATAL "))
    assert f"{tmp_path}/job\ufffd.conv (" in f["error"]


def test_a_reply_over_the_raw_bound_is_that_samples_error_row(native_build, tmp_path):
    """REPLY_MAX_BYTES (64 MiB, edgefarm_runner.c) bounds the runtime's raw reply the runner reads at all;
    the answer's own cap (OUTPUT_MAX_BYTES) applies to the text inside a reply under it."""
    rc, _lines, rows, _ = run(native_build, tmp_path, job(f"@big={64 * 2**20}", "hi"))
    assert rc == 0
    big, small = rows
    assert big["status"] == "error" and "REPLY_MAX_BYTES" in big["error"] and big["response"] is None
    assert small["status"] == "ok" and json.loads(small["response"])["content"][0]["text"] == "fake answer"


def test_a_bench_job_makes_a_fresh_engine_per_repetition_and_checks_every_count(native_build, tmp_path):
    cells = b"EFJOB 1\nS 1\nB 16 8 0 0 cpu\nE\nS 2\nB 16 8 40 0 cpu\nE\nS 3\nB 10 4 0 2 cpu\nE\n"
    rc, lines, rows, _ = run(native_build, tmp_path, cells)
    assert rc == 0, lines
    kinds = ["BEGIN", "READY", "RESULT"] * 3 + ["DONE"]  # each repetition loads its own engine
    assert [k for k, _ in lines] == kinds
    assert [r["status"] for r in rows] == ["ok"] * 3 and rows == results_of(lines)
    assert [r["engine_load"] for r in rows] == [1, 2, 3] and [r["threads"] for r in rows] == [0, 0, 2]
    # the threads each engine's pool ran (the stand-in's pool: the runtime's default 4, or the count set)
    assert [r["threads_ran"] for r in rows] == [4, 4, 2]
    assert [[t["prefill_tokens"] for t in r["turns"]] for r in rows] == [[16], [40, 16], [10]]
    assert [r["turns"][-1]["decode_tokens"] for r in rows] == [8, 8, 4]
    assert rows[0]["ttft_ms"] == pytest.approx(1000 * (16 / 100.0 + 1 / 50.0), rel=1e-3)  # the fake's speeds
    assert (tmp_path / "loads.tsv").read_text().count("\n") == 3  # one line per engine load


def test_a_count_the_runtime_did_not_match_is_an_error_row_naming_both(native_build, tmp_path):
    model = tmp_path / "shortdecode"
    model.mkdir()
    rc, lines, rows, _ = run(native_build, model, b"EFJOB 1\nS 1\nB 16 8 0 0 cpu\nE\n")
    assert rc == 0, lines
    assert rows[0]["status"] == "error"
    assert rows[0]["error"] == "decode: the runtime processed 7 tokens, 8 were asked"
