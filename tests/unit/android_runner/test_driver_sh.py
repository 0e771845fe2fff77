"""android_runner/driver.sh itself, under mksh (Android's shell), with a stand-in binary: one driver per job."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

from android_runner.settings import SETTINGS_FILE, RunnerSettings

DRIVER = Path(__file__).resolve().parents[3] / "android_runner" / "driver.sh"
SHELL = shutil.which("mksh") or "/system/bin/sh"  # scripts/test.sh installs mksh


def _job(tmp: Path, n: int) -> Path:
    job = tmp / "job"
    for i in range(n):
        (job / "samples" / str(i)).mkdir(parents=True)
        (job / "samples" / str(i) / "prompt.txt").write_text(f"prompt {i}; $(touch {tmp}/pwned)\n")
    (job / "index.tsv").write_text("".join(f"{i}\t0\n" for i in range(n)))
    (job / SETTINGS_FILE).write_text(RunnerSettings(model="/nowhere", cache_dir="/c", sample_timeout_ms=30_000).render())
    return job


def _binary(tmp: Path) -> Path:
    """Sleeps a little per sample, then answers with the prompt file's first word."""
    b = tmp / "litert_lm_advanced_main"
    b.write_text(
        '#!/bin/sh\nsleep 1.5\nfor a in "$@"; do case "$a" in --input_prompt_file=*) '
        'read -r w _ < "${a#*=}"; echo "$w";; esac; done\n'
    )
    b.chmod(0o755)
    return b


def _driver(job: Path, binary: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [SHELL, str(DRIVER), "upstream", str(job), str(binary), ""],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _wait_for(proc: subprocess.Popen, marker: str, timeout_s: float = 20) -> list[str]:
    seen, deadline = [], time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line.strip())
        if marker in line:
            return seen
    raise AssertionError(f"no {marker!r} in {seen}")


def test_driver_runs_each_sample_once_and_never_evaluates_prompts(tmp_path):
    job = _job(tmp_path, 2)
    out = subprocess.run(
        [SHELL, str(DRIVER), "upstream", str(job), str(_binary(tmp_path)), ""],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "EDGEFARM END 0 0" in out.stdout and "EDGEFARM END 1 0" in out.stdout
    done = [ln.split("\t")[:2] for ln in (job / "done.tsv").read_text().splitlines()]
    assert done == [["0", "0"], ["1", "0"]]
    assert (job / "samples/1/stdout").read_text().strip() == "prompt"
    assert not (tmp_path / "pwned").exists()  # prompt text is data, never run
    assert not (job / "driver.pid").exists()


def test_a_second_driver_on_the_same_job_stops_the_first(tmp_path):
    """A driver left running by a lost connection must not race the resumed one."""
    job = _job(tmp_path, 3)
    binary = _binary(tmp_path)
    first = _driver(job, binary)
    try:
        _wait_for(first, "EDGEFARM BEGIN 0")
        second = _driver(job, binary)
        out, _ = second.communicate(timeout=60)
        first.wait(timeout=10)  # stopped by the second driver, not left running
    finally:
        for p in (first,):
            if p.poll() is None:
                p.kill()
    assert "stopped an earlier driver" in out, out
    assert second.returncode == 0
    ns = [ln.split("\t")[0] for ln in (job / "done.tsv").read_text().splitlines() if ln.strip()]
    assert sorted(ns) == ["0", "1", "2"]  # every sample finished exactly once


def _native_stub(tmp: Path) -> Path:
    """Speaks the native runner's protocol for samples 1..3; the first start dies by SIGKILL in sample 2
    (as the low-memory killer would), after writing `inflight`."""
    stub = tmp / "edgefarm_runner"
    stub.write_text(
        "#!/bin/sh\n"
        'while [ $# -gt 0 ]; do case "$1" in --results) R=$2; shift;; --state-dir) S=$2; shift;; esac; shift; done\n'
        'echo "EDGEFARM READY {\\"init_ms\\":1}"\n'
        "for n in 1 2 3; do\n"
        '  grep -q "^{\\"n\\":$n," "$R" 2>/dev/null && continue\n'
        '  echo "$n" > "$S/inflight"\n'
        '  if [ "$n" = 2 ] && [ ! -f "$S/died-once" ]; then : > "$S/died-once"; kill -9 $$; fi\n'
        '  echo "{\\"n\\":$n,\\"status\\":\\"ok\\"}" >> "$R"\n'
        "done\n"
    )
    stub.chmod(0o755)
    return stub


def test_native_mode_records_a_dead_runners_sample_and_restarts_it_for_the_rest(tmp_path):
    job = tmp_path / "job"
    job.mkdir()
    (job / "job.conv").write_text("EFJOB 1\n")
    (job / SETTINGS_FILE).write_text(RunnerSettings(model="/m with space.litertlm", cache_dir="/c").render())
    out = subprocess.run(
        [SHELL, str(DRIVER), "native", str(job), str(_native_stub(tmp_path)), ""],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    lines = [json.loads(x) for x in (job / "results.jsonl").read_text().splitlines()]
    assert [(d["n"], d["status"]) for d in lines] == [(1, "ok"), (2, "died"), (3, "ok")]
    assert lines[1]["exit_code"] == 137  # 128 + SIGKILL: the host makes it `oom`
    assert "runner restarted after exit status 137 on sample 2" in out.stdout
    assert not (job / "driver.pid").exists() and not (job / "inflight").exists()


def test_a_runner_pushed_without_its_x_bit_is_made_executable_and_runs(tmp_path):
    """The host no longer runs a `chmod` of its own before the driver: the driver gives the runner x."""
    job = _job(tmp_path, 1)
    binary = _binary(tmp_path)
    binary.chmod(0o644)
    out = subprocess.run([SHELL, str(DRIVER), "upstream", str(job), str(binary), ""], capture_output=True,
                         text=True, timeout=60, check=False)  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert "EDGEFARM END 0 0" in out.stdout and binary.stat().st_mode & 0o111


def test_a_snapshot_the_storage_refuses_is_a_note_not_silence(tmp_path):
    """A full phone: the hook's `dumpsys` output cannot be written (here: the file is /dev/full)."""
    sample = tmp_path / "job" / "samples" / "4"
    sample.mkdir(parents=True)
    (sample / "battery_after").symlink_to("/dev/full")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "dumpsys").write_text('#!/bin/sh\necho "Current $1 state:"\necho "  temperature: 312"\n')
    (bin_dir / "dumpsys").chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin"}
    out = subprocess.run([SHELL, str(DRIVER), "hook", str(sample), "after"], capture_output=True, text=True,
                         env=env, timeout=30, check=False)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "the battery snapshot of sample 4 could not be written" in out.stdout
    assert "temperature: 312" in (sample / "thermal_after").read_text()  # the other snapshot was written
    assert "thermalservice snapshot" not in out.stdout


def _args_binary(tmp: Path) -> Path:
    """Writes its arguments, one per line, beside its prompt (what the driver gave upstream's binary)."""
    b = tmp / "litert_lm_advanced_main"
    b.write_text('#!/bin/sh\nfor a in "$@"; do case "$a" in --input_prompt_file=*) d=${a#*=}; d=${d%/*};; esac; done\n'
                 'for a in "$@"; do echo "$a"; done > "$d/args"\n')  # fmt: skip
    b.chmod(0o755)
    return b


def test_upstreams_flags_are_made_from_the_settings_file_and_the_samples_own_cap(tmp_path):
    """One settings file: the driver turns it into upstream's flags (a path with a space stays one
    argument); the sample's output cap is its flags file's; a setting left at its default adds no flag."""
    job = _job(tmp_path, 2)
    settings = RunnerSettings(model="/d/m b.litertlm", cache_dir="/d/cache", backend="gpu", vision_backend="cpu",
                              threads=3, max_num_tokens=0, sample_timeout_ms=30_000)  # fmt: skip
    (job / SETTINGS_FILE).write_text(settings.render())
    (job / "samples/1/flags").write_text("--max_output_tokens=7\n")
    out = subprocess.run([SHELL, str(DRIVER), "upstream", str(job), str(_args_binary(tmp_path)), ""],
                         capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    args = (job / "samples/1/args").read_text().splitlines()
    assert args[:6] == ["--model_path=/d/m b.litertlm", "--backend=gpu", "--cache_dir=/d/cache",
                        "--vision_backend=cpu", "--num_cpu_threads=3", "--max_output_tokens=7"]  # fmt: skip
    assert not any(a.startswith(("--max_num_tokens", "--audio_backend")) for a in args)
    assert "--max_output_tokens" not in (job / "samples/0/args").read_text()  # no flags file line: none


def test_a_sample_timeout_under_a_second_is_kept_and_a_driver_without_settings_stops(tmp_path):
    """sample_timeout_ms in whole milliseconds (sh arithmetic is integer): 500 ms ends the 1.5 s binary."""
    job = _job(tmp_path, 1)
    (job / SETTINGS_FILE).write_text(RunnerSettings(model="/m", cache_dir="/c", sample_timeout_ms=500).render())
    out = subprocess.run([SHELL, str(DRIVER), "upstream", str(job), str(_binary(tmp_path)), ""],
                         capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert out.returncode == 0 and "EDGEFARM END 0 124" in out.stdout, out.stdout + out.stderr
    (job / SETTINGS_FILE).unlink()
    out = subprocess.run([SHELL, str(DRIVER), "upstream", str(job), str(_binary(tmp_path)), ""],
                         capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert out.returncode == 2 and "no settings file in" in out.stderr


def test_the_hook_reads_its_cooldown_gate_from_the_settings_file(tmp_path):
    """Battery at 31.2 C, the gate at 30 C for at most 1 s: the hook waits its 1 s and says so; with the
    gate off (a resumed run without --cooldown-c) it does not wait at all."""
    sample = tmp_path / "job" / "samples" / "1"
    sample.mkdir(parents=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "dumpsys").write_text('#!/bin/sh\necho "Current $1 state:"\necho "  temperature: 312"\n')
    (bin_dir / "dumpsys").chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin"}
    for mc, waited in ((30_000, True), (None, False)):
        settings = RunnerSettings(model="/m", cache_dir="/c", cooldown_mc=mc, cooldown_max_ms=1000)
        (tmp_path / "job" / SETTINGS_FILE).write_text(settings.render())
        out = subprocess.run([SHELL, str(DRIVER), "hook", str(sample), "before"], capture_output=True, text=True,
                             env=env, timeout=30, check=False)  # fmt: skip
        assert out.returncode == 0, out.stderr
        assert ("battery still at 31.2 C after 1 s" in out.stdout) is waited, out.stdout
        assert (sample / "cooldown_ms").exists() is waited
        if waited:
            assert 1000 <= int((sample / "cooldown_ms").read_text()) <= 3000
