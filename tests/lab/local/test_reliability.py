"""Issue 10, "nothing lost, nothing run twice": user stories through the real CLI on this host.

Three first runs at once on a fresh model cache, an unwritable or full --out, an alias bomb in
devices.yaml, a hostile run.json, `--resume RUN_DIR` alone, a board that is down under
`--devices all`, a 10 MB prompt, the umask. Each ends with every sample accounted for exactly once
and the reports written (where a run folder can exist at all), or with one clear error and its fix.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import BUNDLED, REPO, device_json, edgefarm, only_run_dir, python_wrapper, results, run_json

TEXT3 = ("--modality", "text", "--limit", "3", "--max-output-tokens", "4")


def inventory(path: Path, *entries: dict) -> Path:
    path.write_text(json.dumps({"devices": list(entries)}))
    return path


def local_entry(workdir: Path) -> dict:
    return {"name": "this-host", "kind": "local", "workdir": str(workdir)}


def no_traceback(p: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in p.stderr, p.stderr[-3000:]


def every_sample_once(run_dir: Path, device: str = "this-host") -> list[dict]:
    """The device's rows, checked: exactly the run's sample ids, each once, in order; reports written."""
    rows = results(run_dir, device)
    assert [r["id"] for r in rows] == run_json(run_dir, "run.json")["dataset"]["sample_ids"]
    for name in ("report.json", "report.md", "report.html"):
        assert (run_dir / name).is_file(), name
    assert set(device_json(run_dir, "results.json", device)) == {r["id"] for r in rows}
    return rows


def in_mount_namespace(script: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """`sh -c script args...` in a private mount namespace (root: `unshare -m`; else mapped root)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.fail("`unshare` (util-linux) is missing: apt-get install -y util-linux")
    ns = [unshare, "-m"] if os.geteuid() == 0 else [unshare, "--mount", "--map-root-user"]
    full_env = {**os.environ, "COLUMNS": "200", **(env or {})}
    full_env.pop("EDGEFARM_INVENTORY", None)
    p = subprocess.run(
        [*ns, "sh", "-c", script, "sh", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=full_env,
        cwd=REPO,
        check=False,
    )
    if "mount:" in p.stderr and "permission denied" in p.stderr.lower():
        pytest.fail(f"cannot mount a tmpfs here (needs root or user namespaces): {p.stderr}")
    return p


# ---------------------------------------------------------------- model cache and run folders


def test_three_first_runs_at_once_on_one_device_one_runs_and_two_are_refused(tmp_path: Path):
    """Three runs started together on one device, its model not cached yet: one takes the device
    (issue 24: one run per device), copies the model once and runs; the other two are refused at once
    naming it, each in a folder of its own, and nothing half-copied is left behind."""
    work = tmp_path / "fresh-cache"  # nothing cached yet
    entry = {**local_entry(work), "python": python_wrapper(tmp_path)}
    inv = inventory(tmp_path / "devices.yaml", entry)
    out = tmp_path / "runs"
    cmd = [sys.executable, "-m", "orchestrator", "run", "--devices", "local", "--inventory", str(inv)]
    env = {**os.environ, "COLUMNS": "200", "EDGEFARM_TEST_FAULTS": "SLOW=4"}  # the winner holds it >= 12 s
    env.pop("EDGEFARM_INVENTORY", None)
    procs = [
        subprocess.Popen(
            [*cmd, "--out", str(out), *TEXT3],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    done = [(p, *p.communicate(timeout=600)) for p in procs]
    for p, _, stderr in done:
        assert "Traceback" not in stderr
    ran = [d for d in done if d[0].returncode == 0]
    refused = [d for d in done if d[0].returncode == 3]
    assert len(ran) == 1 and len(refused) == 2, [(p.returncode, err[-500:]) for p, _, err in done]
    run_dirs = sorted(d for d in out.iterdir() if d.is_dir())
    assert len(run_dirs) == 3  # never two runs in one folder
    winner = next(d for d in run_dirs if (d / "devices" / "this-host" / "results.jsonl").is_file()
                  and results(d))  # fmt: skip
    for _, _, stderr in refused:
        said = " ".join(stderr.split())
        assert f"this-host is in use by run {winner.name} (pid {ran[0][0].pid} on " in said, said
    assert [r["status"] for r in every_sample_once(winner)] == ["ok"] * 3
    assert device_json(winner, "outcome.json")["model_push"]["files"] == 1
    assert not [p for p in work.rglob("*.part")]  # no temp copy left behind


def test_run_ids_taken_already_get_a_new_one(tmp_path: Path, monkeypatch):
    from orchestrator.farm import rundir as run_cli

    ids = iter(["20260101-000000-aaaa", "20260101-000000-aaaa", "20260101-000000-bbbb"])
    monkeypatch.setattr(run_cli, "new_run_id", lambda now: next(ids))
    first = run_cli.new_run_dir(tmp_path)
    second = run_cli.new_run_dir(tmp_path)
    assert (first[0], second[0]) == ("20260101-000000-aaaa", "20260101-000000-bbbb")
    assert first[1].is_dir() and second[1].is_dir()


# ---------------------------------------------------------------- file-system failures


def test_out_under_a_regular_file_is_an_error_with_the_fix(tmp_path: Path):
    (tmp_path / "a-file").write_text("x")
    inv = inventory(tmp_path / "devices.yaml", local_entry(tmp_path / "work"))
    for out in (tmp_path / "a-file" / "runs", tmp_path / "a-file"):
        p = edgefarm("run", "--devices", "local", "--inventory", str(inv), "--out", str(out), *TEXT3)
        assert p.returncode == 5, p.stderr
        no_traceback(p)
        assert str(out) in p.stderr and "fix:" in p.stderr and "--out" in p.stderr
    assert (tmp_path / "a-file").read_text() == "x"


def test_a_read_only_out_is_an_error_with_the_fix(tmp_path: Path):
    mnt = tmp_path / "ro"
    mnt.mkdir()
    inv = inventory(tmp_path / "devices.yaml", local_entry(tmp_path / "work"))
    script = 'mount -t tmpfs -o ro,size=64k tmpfs "$1" && shift && exec "$@"'
    p = in_mount_namespace(
        script, str(mnt), sys.executable, "-m", "orchestrator", "run", "--devices", "local",
        "--inventory", str(inv), "--out", str(mnt / "runs"), *TEXT3,
    )  # fmt: skip
    assert p.returncode == 5, p.stderr
    no_traceback(p)
    assert f"{mnt / 'runs'}: cannot create the folder: the file system is read-only" in p.stderr
    assert "fix:" in p.stderr


def test_a_full_disk_while_writing_is_an_error_then_resume_finishes_the_run(tmp_path: Path):
    mnt, saved = tmp_path / "small", tmp_path / "saved"
    mnt.mkdir()
    inv = inventory(tmp_path / "devices.yaml", local_entry(tmp_path / "work"))
    run = f'"{sys.executable}" -m orchestrator run'
    script = f"""
        mount -t tmpfs -o size=16k tmpfs "$1" || exit 90
        {run} --devices local --inventory "$2" --out "$1/runs" {" ".join(TEXT3)} >"$3/1.out" 2>"$3/1.err"
        echo $? >"$3/1.rc"
        mount -o remount,size=8m "$1" || exit 91   # space freed
        {run} --resume "$1"/runs/* >"$3/2.out" 2>"$3/2.err"
        echo $? >"$3/2.rc"
        cp -a "$1/runs" "$3/runs"
    """
    saved.mkdir()
    p = in_mount_namespace(script, str(mnt), str(inv), str(saved))
    assert p.returncode == 0, p.stderr
    first_err = (saved / "1.err").read_text()
    assert "Traceback" not in first_err, first_err
    assert (saved / "1.rc").read_text().strip() == "5", first_err
    assert "no space left on the disk" in first_err and "fix:" in first_err
    second_err = (saved / "2.err").read_text()
    assert (saved / "2.rc").read_text().strip() == "0", second_err
    run_dir = only_run_dir(saved / "runs")
    assert run_dir is not None
    rows = every_sample_once(run_dir)
    assert [r["status"] for r in rows] == ["ok"] * 3
    assert not [x for x in run_dir.rglob(".*") if x.is_file()]  # no temp file left from the failed writes


def test_run_files_follow_the_umask(tmp_path: Path):
    inv = inventory(tmp_path / "devices.yaml", local_entry(tmp_path / "work"))
    out = tmp_path / "runs"
    p = subprocess.run(
        ["sh", "-c", 'umask 002 && exec "$@"', "sh", sys.executable, "-m", "orchestrator", "run",
         "--devices", "local", "--inventory", str(inv), "--out", str(out), *TEXT3],
        capture_output=True, text=True, cwd=REPO, timeout=600, check=False,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    run_dir = only_run_dir(out)
    every_sample_once(run_dir)
    modes = {str(f.relative_to(run_dir)): oct(stat.S_IMODE(f.stat().st_mode)) for f in run_dir.rglob("*")}
    files = {k: v for k, v in modes.items() if (run_dir / k).is_file()}
    assert {"run.json", "report.json", "report.html", "devices/this-host/results.jsonl"} <= set(files)
    assert set(files.values()) == {"0o664"}, files  # group-readable, as the lab server's umask says
    assert {v for k, v in modes.items() if (run_dir / k).is_dir()} == {"0o775"}


# ---------------------------------------------------------------- inventory


def test_an_alias_bomb_in_devices_yaml_is_refused_fast(tmp_path: Path):
    lines = ["devices:", "  - name: this-host", "    kind: local", "    workdir:"]
    lines.append("      - &l0 [1, 1, 1, 1, 1, 1, 1, 1, 1]")
    for i in range(1, 10):  # 9**10 values once expanded
        lines.append(f"      - &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]")
    bomb = tmp_path / "devices.yaml"
    bomb.write_text("\n".join(lines) + "\n")
    for args in (("devices", "--inventory", str(bomb)),
                 ("run", "--devices", "all", "--inventory", str(bomb), "--out", str(tmp_path / "r"), *TEXT3)):  # fmt: skip
        t0 = time.monotonic()
        p = edgefarm(*args)
        assert time.monotonic() - t0 < 60  # interpreter start and imports (a loaded box); the YAML: at once
        assert p.returncode == 2, p.stderr[:2000]
        no_traceback(p)
        # line 9 holds &l4, where the expanded values pass 20 000 (the bound)
        assert len(p.stderr) < 1000 and f"{bomb}:9" in p.stderr and "alias" in p.stderr
    assert not (tmp_path / "r").exists()


# ---------------------------------------------------------------- resume


@pytest.fixture()
def first_run(tmp_path: Path, run_here):
    """A finished run of 3 samples picked with --per-modality (the flag the old fix text forgot)."""
    flags = ("--per-modality", "1", "--limit", "3", "--max-output-tokens", "4", "--sample-timeout", "120")
    p, run_dir = run_here(*flags)
    assert p.returncode == 0, p.stderr
    return run_dir


def test_resume_with_only_the_run_folder_continues_the_recorded_selection(tmp_path: Path, first_run):
    run_dir = first_run
    before = run_json(run_dir, "run.json")
    (device_results,) = [p for p in (tmp_path / "work").rglob("results.jsonl") if before["run_id"] in str(p)]
    lines = device_results.read_text().splitlines()
    device_results.write_text(lines[0] + "\n")  # as if the device stopped after the first sample
    p = edgefarm("run", "--resume", str(run_dir))  # no --devices/--inventory/--per-modality/...
    assert p.returncode == 0, p.stderr
    no_traceback(p)
    after = run_json(run_dir, "run.json")
    assert after["flags"] == before["flags"] and after["dataset"] == before["dataset"]
    assert after["run_id"] == before["run_id"] and after["started_at"] == before["started_at"]
    notes = device_json(run_dir, "outcome.json")["notes"]
    assert any("2 sample(s) to run" in n for n in notes), notes
    rows = every_sample_once(run_dir)
    assert len(rows) == 3 and len({r["id"] for r in rows}) == 3
    assert [d.name for d in (tmp_path / "runs").iterdir()] == [run_dir.name]  # no second folder


def test_resume_refuses_a_flag_that_differs_naming_both_values(first_run):
    p = edgefarm("run", "--resume", str(first_run), "--per-modality", "2")
    assert p.returncode == 2, p.stderr
    no_traceback(p)
    assert "--per-modality 2 differs from this run's recorded --per-modality 1" in p.stderr
    assert "fix:" in p.stderr
    same = edgefarm("run", "--resume", str(first_run), "--per-modality", "1", "--limit", "3")
    assert same.returncode == 0, same.stderr  # the same values typed again are fine
    every_sample_once(first_run)


@pytest.mark.parametrize(
    "run_id",
    [
        "$(touch /tmp/edgefarm-pwned)",
        "../../../../tmp/edgefarm-escape",
        "20260101-000000-abcd/../../x",
        "20260101-000000-abcd; rm -rf ~",
        "",
        12345,
        None,
    ],
)
def test_a_hostile_run_id_in_run_json_is_refused_at_resume(tmp_path: Path, run_id):
    run_dir = tmp_path / "runs" / "20260101-000000-abcd"
    run_dir.mkdir(parents=True)
    record = {"schema_version": 1, "run_id": run_id, "started_at": "2026-01-01T00:00:00+00:00",
              "flags": {"devices": "local", "limit": 1}, "devices": ["this-host"]}  # fmt: skip
    (run_dir / "run.json").write_text(json.dumps(record))
    before = sorted(p.name for p in tmp_path.rglob("*"))
    p = edgefarm("run", "--resume", str(run_dir))
    assert p.returncode == 2, p.stderr
    no_traceback(p)
    assert "run_id" in p.stderr and "fix:" in p.stderr
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # nothing written anywhere
    assert not Path("/tmp/edgefarm-pwned").exists() and not Path("/tmp/edgefarm-escape").exists()


@pytest.mark.parametrize(
    "run_id", ["20260101-000000-abcd\n", "\u0662\u0660\u0662\u0666\u0660\u0661\u0660\u0661-000000-abcd"]
)
def test_a_run_id_with_a_trailing_newline_or_non_ascii_digits_is_refused(tmp_path: Path, run_id):
    """The folder is named as its run_id, so only the pattern can refuse it (before: `$` let a
    trailing newline through and `\\d` took any script's digits; folders so named reached the phone)."""
    run_dir = tmp_path / "runs" / run_id
    run_dir.mkdir(parents=True)
    record = {"schema_version": 1, "run_id": run_id, "started_at": "2026-01-01T00:00:00+00:00",
              "flags": {"devices": "local", "limit": 1}, "devices": ["this-host"]}  # fmt: skip
    (run_dir / "run.json").write_text(json.dumps(record))
    before = sorted(p.name for p in tmp_path.rglob("*"))
    for command in (("run", "--resume", str(run_dir)), ("report", str(run_dir))):
        p = edgefarm(*command)
        assert p.returncode == 2, (command, p.stderr)
        no_traceback(p)
        assert "is not a run id edgefarm makes" in p.stderr and "fix:" in p.stderr
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_a_run_json_copied_into_another_folder_is_refused_at_resume(tmp_path: Path, first_run):
    other = tmp_path / "runs" / "20260101-000000-ffff"
    shutil.copytree(first_run, other)
    p = edgefarm("run", "--resume", str(other))
    assert p.returncode == 2, p.stderr
    assert "does not name this folder" in p.stderr
    report = edgefarm("report", str(other))  # reading a copied run is fine
    assert report.returncode == 0, report.stderr


# ---------------------------------------------------------------- what `all` uses


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: nothing listens there


def test_devices_and_run_all_agree_on_a_board_that_is_down(tmp_path: Path):
    down = {"name": "pi-down", "kind": "ssh", "host": "127.0.0.1", "port": _closed_port(), "user": "pi"}
    inv = inventory(tmp_path / "devices.yaml", down, local_entry(tmp_path / "work"))
    listing = edgefarm("devices", "--inventory", str(inv), "--json")
    assert listing.returncode == 0, listing.stderr
    data = json.loads(listing.stdout)
    assert [d["name"] for d in data["devices"]] == ["this-host"]
    assert [u["name"] for u in data["unusable"]] == ["pi-down"]

    out = tmp_path / "runs"
    p = edgefarm("run", "--devices", "all", "--inventory", str(inv), "--out", str(out), *TEXT3)
    assert p.returncode == 0, p.stderr  # what `devices` listed as unusable is not used
    no_traceback(p)
    assert "not used:" in p.stderr and "pi-down" in p.stderr
    run_dir = only_run_dir(out)
    record = run_json(run_dir, "run.json")
    assert record["devices"] == [d["name"] for d in data["devices"]]
    assert [u["name"] for u in record["unusable"]] == ["pi-down"]
    assert not (run_dir / "devices" / "pi-down").exists()
    every_sample_once(run_dir)
    assert "pi-down" in (run_dir / "report.md").read_text()  # listed as not used in the report


# ---------------------------------------------------------------- a prompt far too large


def test_a_10_mb_prompt_is_refused_before_the_runtime_and_the_rest_runs(tmp_path: Path):
    rows = [json.loads(x) for x in (BUNDLED / "data/test/metadata.jsonl").read_text().splitlines()]
    text = [r for r in rows if r["modality"] == "text"][:2]
    big = {**text[0], "test_id": "TXT-HUGE", "prompt": "word " * 2_000_000}  # 10 MB
    data = tmp_path / "big-set"
    data.mkdir()
    (data / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in (text[0], big, text[1])))
    inv = inventory(tmp_path / "devices.yaml", local_entry(tmp_path / "work"))
    out = tmp_path / "runs"
    measure = (
        "import resource, subprocess, sys; p = subprocess.run(sys.argv[1:]); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(p.returncode)"
    )
    p = subprocess.run(
        [sys.executable, "-c", measure, sys.executable, "-m", "orchestrator", "run", "--devices", "local",
         "--inventory", str(inv), "--out", str(out), "--dataset", str(data), "--max-output-tokens", "4"],
        capture_output=True, text=True, cwd=REPO, timeout=600, check=False,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    no_traceback(p)
    peak_mb = int(p.stdout.strip().splitlines()[-1]) / 1024
    assert peak_mb < 600, f"peak RSS {peak_mb:.0f} MB"  # 2.1 GB before; about 200 MB now
    assert "not sent:" in p.stderr and "TXT-HUGE" in p.stderr
    run_dir = only_run_dir(out)
    by_id = {r["id"]: r for r in every_sample_once(run_dir)}
    assert by_id["TXT-HUGE"]["status"] == "error"
    assert by_id["TXT-HUGE"]["error"].startswith(
        "prompt refused before the runtime: its text is 10000000 bytes"
    )
    assert [by_id[r["test_id"]]["status"] for r in text] == ["ok", "ok"]
    assert device_json(run_dir, "results.json")["TXT-HUGE"] == ""  # scored, and it fails
    job = (run_dir / "devices" / "this-host" / "job" / "job.jsonl").read_text()
    assert len(job) < 10_000  # the text never went into the job bundle


# ---------------------------------------------------------------- JSON from outside, through the CLI


def test_score_refuses_a_results_file_nested_too_deep_and_an_unwritable_out(tmp_path: Path):
    deep = tmp_path / "results.json"
    deep.write_text('{\n  "TXT-001": ' + "[" * 5000 + "]" * 5000 + "\n}\n")
    p = edgefarm("score", str(deep))
    assert p.returncode == 2, p.stderr
    no_traceback(p)
    assert f"{deep}:2" in p.stderr and "nested deeper than 64 levels" in p.stderr and "fix:" in p.stderr

    good = tmp_path / "good.json"
    good.write_text(json.dumps({"TXT-001": "Tokyo"}))
    (tmp_path / "a-file").write_text("")
    p = edgefarm("score", str(good), "--out", str(tmp_path / "a-file" / "report.json"))
    assert p.returncode == 5, p.stderr
    no_traceback(p)
    assert "a file is in the way" in p.stderr and "or choose another --out" in p.stderr


def test_dataset_check_lists_a_row_nested_5000_deep_with_its_line(tmp_path: Path):
    meta = tmp_path / "metadata.jsonl"
    good = {"test_id": "TXT-1", "modality": "text", "task": "qa", "prompt": "Hi?", "reference": "Hello"}
    meta.write_text(json.dumps(good) + "\n" + '{"test_id": "TXT-2", "x": ' + "[" * 5000 + "]" * 5000 + "}\n")
    p = edgefarm("dataset", "check", str(meta))
    assert p.returncode == 2, p.stderr
    no_traceback(p)
    assert f"{meta}:2" in p.stdout + p.stderr and "nested deeper" in p.stdout + p.stderr


def test_report_to_a_full_stdout_is_an_error_not_a_traceback(first_run):
    with open("/dev/full", "w") as full:
        p = subprocess.run(
            [sys.executable, "-m", "orchestrator", "report", str(first_run)],
            stdout=full, stderr=subprocess.PIPE, text=True, cwd=REPO, timeout=120, check=False,
        )  # fmt: skip
    assert p.returncode == 5, p.stderr
    assert "cannot write the report to stdout" in p.stderr and "Traceback" not in p.stderr
