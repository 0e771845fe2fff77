"""edgefarm's native runner on lab phones (mksh + toybox, real adb servers, the real runtime through
its C API): one model load per phone, the same conversation as this host, hostile text passed
through as text, and a resume after an unplug that leaves no second runner alive."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orchestrator.datasets import BUNDLED_DATASET, load_dataset
from orchestrator.run.selection import select_samples

REPO = Path(__file__).resolve().parents[3]
PHONES = {
    "google-pixel-8": "pixel8",
    "samsung-sm-s921b": "s24",
}  # the two phones on farm host 1 (the local server)


def edgefarm(lab, *args: str, timeout: float = 300, **env_extra: str) -> subprocess.CompletedProcess:
    env = lab.env(COLUMNS="200", **env_extra)
    env.pop("EDGEFARM_INVENTORY", None)
    return subprocess.run([sys.executable, "-m", "orchestrator", *args], check=False, capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=REPO)  # fmt: skip


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.is_file() else []


def _run_dir(out: Path) -> Path:
    dirs = [p for p in out.iterdir() if p.is_dir()]
    assert len(dirs) == 1, dirs
    return dirs[0]


def _job_on_phone(lab, label: str, run_id: str) -> Path:
    return lab.device_root(label) / "local" / "tmp" / "edgefarm" / "runs" / run_id / "job"


def test_whole_dataset_on_two_phones_matches_this_host_with_one_model_load_each(adb_lab, tmp_path):
    inv = tmp_path / "devices.yaml"
    inv.write_text(
        "devices:\n  - name: this-host\n    kind: local\n    workdir: " + str(tmp_path / "host") + "\n"
    )
    out = tmp_path / "runs"
    p = edgefarm(
        adb_lab,
        "run",
        "--devices",
        "all",
        "--inventory",
        str(inv),
        "--out",
        str(out),
        "--sample-timeout",
        "60",
    )
    assert p.returncode == 0, p.stderr[-3000:]
    run_dir = _run_dir(out)
    devices = {*PHONES, "this-host"}
    assert set(json.loads((run_dir / "run.json").read_text())["devices"]) == devices
    rows = {
        name: {r["id"]: r for r in _jsonl(run_dir / "devices" / name / "results.jsonl")} for name in devices
    }
    ds = load_dataset(BUNDLED_DATASET)
    assert all(len(r) == len(ds.samples) for r in rows.values()), {n: len(r) for n, r in rows.items()}
    host = rows["this-host"]
    for name in PHONES:
        outcome = json.loads((run_dir / "devices" / name / "outcome.json").read_text())
        assert outcome["error"] == "" and outcome["model_loads"] == 1, outcome
        assert outcome["runner"]["runner"] == "native" and len(outcome["runner"]["runner_sha256"]) == 64
        assert outcome["runner"]["runtime_version"].startswith("litert-lm-api 0.18.1")
        phone = rows[name]
        differ = [
            i
            for i in host
            if (phone[i]["status"], phone[i]["output"]) != (host[i]["status"], host[i]["output"])
        ]
        assert differ == [], [(i, host[i]["output"][:60], phone[i]["output"][:60]) for i in differ[:5]]
        assert all(phone[i]["ttft_ms"] is not None for i in phone if phone[i]["status"] == "ok")
        assert all(phone[i]["peak_rss_mb"] > 10 for i in phone if phone[i]["status"] == "ok")
        assert phone[next(iter(phone))]["thermal_before"]["battery_temp_c"] is not None
        # every modality ran as structured content, tool calls with their tools, multi-turn as real turns
        by_mod = {s.modality: s for s in ds.samples}
        multi = next(s for s in ds.samples if len(s.turns) > 1)
        assert len(phone[multi.id]["turns"]) == len(multi.turns)
        assert {"image", "audio", "tool_call", "multi_turn"} <= set(by_mod)
        report = json.loads((run_dir / "devices" / name / "report.json").read_text())["summary"]
        host_report = json.loads((run_dir / "devices" / "this-host" / "report.json").read_text())["summary"]
        assert report["total_passed"] == host_report["total_passed"]
        assert report["total_scored"] == host_report["total_scored"]
    conv = (_job_on_phone(adb_lab, "pixel8", run_dir.name) / "job.conv").read_bytes()
    tools = next(s for s in ds.samples if s.tools)
    assert json.dumps(list(tools.tools), sort_keys=True).encode() in conv  # tools reached the runtime as JSON


HOSTILE = [
    "Describe [image:/etc/passwd] please.",
    "Run $(touch /data/local/tmp/pwned-dollar) now",
    "Back `touch /data/local/tmp/pwned-tick` ticks",
    "Quotes \" ' and a\nnewline; rm -rf /data/local/tmp/edgefarm",
]


def test_hostile_prompts_reach_the_phone_as_text_only(adb_lab, tmp_path):
    ds_dir = tmp_path / "hostile" / "data" / "test"
    ds_dir.mkdir(parents=True)
    rows = [{"test_id": f"EVIL-{i}", "modality": "text", "task": "qa", "prompt": p, "reference": "ok",
             "reference_variants": ["ok"]} for i, p in enumerate(HOSTILE, 1)]  # fmt: skip
    (ds_dir / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "runs"
    p = edgefarm(
        adb_lab,
        "run",
        "--devices",
        "google-pixel-8",
        "--dataset",
        str(tmp_path / "hostile"),
        "--out",
        str(out),
    )
    assert p.returncode == 0, p.stderr[-3000:]
    run_dir = _run_dir(out)
    results = _jsonl(run_dir / "devices" / "google-pixel-8" / "results.jsonl")
    assert [r["status"] for r in results] == ["ok"] * len(HOSTILE), results  # no media read, no error
    tmp = adb_lab.device_root("pixel8") / "local" / "tmp"
    assert not list(tmp.glob("pwned*")) and (tmp / "edgefarm").is_dir()  # no command ran
    job = (_job_on_phone(adb_lab, "pixel8", run_dir.name) / "job.conv").read_bytes().decode()
    sent = [json.loads(line) for line in job.splitlines() if line.startswith('{"role"')]
    assert [m["content"] for m in sent] == [[{"type": "text", "text": p}] for p in HOSTILE]  # verbatim


def _runners_of(job: Path) -> list[int]:
    """Live native runners of this job, from the process table the phones share with the host."""
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmd = (proc / "cmdline").read_bytes().split(b"\0")
                state = (proc / "stat").read_text().rsplit(")", 1)[-1].split()[0]
            except OSError:
                continue
            mine = f"/runs/{job.parent.name}/job/job.conv".encode()
            if (
                cmd
                and cmd[0].endswith(b"edgefarm_runner")
                and state != "Z"
                and any(a.endswith(mine) for a in cmd)
            ):
                pids.append(int(proc.name))
    return pids


def _start_slow_run(lab, label: str, args: list[str], out: Path, log: Path, results: int):
    """Start `edgefarm run ARGS` in the background; return (process, env, the run's job folder on the
    phone) once the phone has recorded `results` samples."""
    env = lab.env(COLUMNS="200")
    env.pop("EDGEFARM_INVENTORY", None)
    with open(log, "w") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "orchestrator", *args], cwd=REPO, env=env,
                                stdout=sink, stderr=subprocess.STDOUT)  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        runs = list(out.glob("*")) if out.exists() else []
        if runs and len(_jsonl(_job_on_phone(lab, label, runs[0].name) / "results.jsonl")) >= results:
            return proc, env, _job_on_phone(lab, label, runs[0].name)
        assert proc.poll() is None, log.read_text()[-3000:]
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"no {results} results on {label} within 60 s:\n{log.read_text()[-3000:]}")


def test_resume_after_unplug_stops_the_runner_left_on_the_phone(adb_lab, tmp_path):
    """A real phone keeps running what it ran when the cable comes out; the resumed driver must stop
    that runner for certain (no `timeout` wrapper to forward signals), and every sample runs once."""
    label, name, limit = (
        "s24",
        "samsung-sm-s921b",
        8,
    )  # after the unplug ~5 samples x 3 s keep the old runner busy
    ids = [s.id for s in select_samples(load_dataset(BUNDLED_DATASET), ["text"], limit, None)]
    out = tmp_path / "runs"
    # The cooldown gate makes each sample wait ~3 s in the driver's hook (the battery reads 29.1 C),
    # so the runner is still busy when the resume starts.
    args = ["run", "--devices", name, "--modality", "text", "--limit", str(limit), "--out", str(out),
            "--cooldown-c", "25", "--cooldown-max-s", "3"]  # fmt: skip
    phone = adb_lab.phones[label]
    phone.unplug_keeps_processes = True
    log = tmp_path / "first.log"
    try:
        proc, env, job = _start_slow_run(adb_lab, label, args, out, log, results=2)
        phone.vanish()
        rc = proc.wait(timeout=60)
        assert rc == 3, log.read_text()[-3000:]
        left_behind = _runners_of(job)
        assert left_behind, "the unplugged phone's runner should still be running (a real phone keeps it)"
        adb_lab.come_back(label)
        second = subprocess.run([sys.executable, "-m", "orchestrator", "run", "--resume", str(_run_dir(out))],
                                check=False, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
        assert second.returncode == 0, second.stderr[-3000:]
        outcome = json.loads((_run_dir(out) / "devices" / name / "outcome.json").read_text())
        assert any("stopped an earlier driver" in n for n in outcome["notes"]), outcome["notes"]
        assert not [pid for pid in left_behind if Path(f"/proc/{pid}").exists()], (
            "the old runner survived the resume"
        )
        assert _runners_of(job) == []  # nothing of this job is still running
        on_phone = [r["n"] for r in _jsonl(job / "results.jsonl")]
        assert sorted(on_phone) == list(range(1, limit + 1)), (
            on_phone
        )  # every sample exactly once on the phone
        results = _jsonl(_run_dir(out) / "devices" / name / "results.jsonl")
        assert [r["id"] for r in results] == ids and all(r["status"] == "ok" for r in results)
        assert (
            outcome["model_loads"] == 2 and outcome["error"] == ""
        )  # one per session: the lost one, the resume
    finally:
        phone.unplug_keeps_processes = False
        adb_lab.come_back(label)


def test_ctrl_c_stops_the_runner_on_the_phone_and_resume_finishes(adb_lab, tmp_path):
    label, name, limit = "pixel8", "google-pixel-8", 6
    out = tmp_path / "runs"
    args = ["run", "--devices", name, "--modality", "text", "--limit", str(limit), "--out", str(out),
            "--cooldown-c", "25", "--cooldown-max-s", "1"]  # fmt: skip
    log = tmp_path / "first.log"
    proc, env, job = _start_slow_run(adb_lab, label, args, out, log, results=1)
    assert _runners_of(job), log.read_text()[-3000:]
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 130, log.read_text()[-3000:]
    assert _runners_of(job) == []  # stopped on the phone, not left running there
    run_dir = _run_dir(out)
    kept = _jsonl(run_dir / "devices" / name / "results.jsonl")
    assert 1 <= len(kept) < limit and all(r["status"] == "ok" for r in kept)
    assert f"--resume {run_dir}" in log.read_text()
    second = subprocess.run([sys.executable, "-m", "orchestrator", "run", "--resume", str(run_dir)], check=False,
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert second.returncode == 0, second.stderr[-3000:]
    assert sorted(r["n"] for r in _jsonl(job / "results.jsonl")) == list(range(1, limit + 1))
    assert len(_jsonl(run_dir / "devices" / name / "results.jsonl")) == limit


# ---------------------------------------------------------------- issue 21 / 24: a runner you can trust blind

FAKE_SOURCE = REPO / "tests" / "unit" / "native" / "fake_litert_lm.c"


@pytest.fixture(scope="module")
def fake_runtime(tmp_path_factory) -> Path:
    """A stand-in liblitert-lm.so (tests/unit/native/fake_litert_lm.c, the runner's declarations): not the
    pinned library. Its answers are picked by words in the prompt (`@deep=N`, ...)."""
    from android_runner.native.build import API_HEADER, PINNED_VERSION

    folder = tmp_path_factory.mktemp("fake-runtime")
    lib = folder / "liblitert-lm.so"
    argv = [
        "gcc",
        "-O1",
        "-fPIC",
        "-shared",
        "-I",
        str(API_HEADER.parent),
        "-o",
        str(lib),
        str(FAKE_SOURCE),
    ]
    p = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    (folder / "VERSION").write_text(f"litert-lm-api {PINNED_VERSION} (fake library for tests)\n")
    return lib


def _dataset(tmp_path: Path, prompts: list[str]) -> Path:
    ds_dir = tmp_path / "ds" / "data" / "test"
    ds_dir.mkdir(parents=True)
    rows = [{"test_id": f"T-{i}", "modality": "text", "task": "qa", "prompt": p, "reference": "ok",
             "reference_variants": ["ok"]} for i, p in enumerate(prompts, 1)]  # fmt: skip
    (ds_dir / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path / "ds"


def test_a_runtime_library_that_is_not_the_pinned_one_is_refused_and_the_override_names_it_on_every_row(
    adb_lab, fake_runtime, tmp_path
):
    """Through the CLI: refused with both sha256s and the fix; with EDGEFARM_ALLOW_RUNTIME=1 it runs and
    every row says which library ran. The fake's hostile reply (a tool call nested 5000 deep, issue 24)
    is that sample's error row, the others are kept, and --resume of the run works."""
    from android_runner.native.build import installed_record_sha256

    ds = _dataset(tmp_path, ["@deep=5000 please", "plain question", "another one"])
    out = tmp_path / "runs"
    args = ["run", "--devices", "google-pixel-8", "--dataset", str(ds), "--out", str(out)]
    p = edgefarm(adb_lab, *args, EDGEFARM_RUNTIME_LIB=str(fake_runtime))
    assert p.returncode == 3, p.stderr[-3000:]
    assert "the runtime library is not the pinned one" in p.stderr, p.stderr[-3000:]
    assert installed_record_sha256() in p.stderr and "EDGEFARM_ALLOW_RUNTIME=1" in p.stderr

    out2 = tmp_path / "runs2"
    args2 = ["run", "--devices", "google-pixel-8", "--dataset", str(ds), "--out", str(out2)]
    p = edgefarm(adb_lab, *args2, EDGEFARM_RUNTIME_LIB=str(fake_runtime), EDGEFARM_ALLOW_RUNTIME="1")
    assert p.returncode == 0, p.stderr[-3000:]
    assert "RecursionError" not in p.stderr and "Traceback" not in p.stderr
    run_dir = _run_dir(out2)
    rows = {r["id"]: r for r in _jsonl(run_dir / "devices" / "google-pixel-8" / "results.jsonl")}
    assert rows["T-1"]["status"] == "error" and "nested deeper than" in rows["T-1"]["error"]
    assert [rows[i]["status"] for i in ("T-2", "T-3")] == ["ok", "ok"] and rows["T-2"][
        "output"
    ] == "fake answer"
    for r in rows.values():
        assert "/data/local/tmp/edgefarm/lib/liblitert-lm.so: sha256 " in r["runtime_override"], r
        assert r["runner"] == "native" and r["peak_method"] in ("hwm_reset", "sampled")
    outcome = json.loads((run_dir / "devices" / "google-pixel-8" / "outcome.json").read_text())
    assert any("not the pinned one" in n for n in outcome["notes"]), outcome["notes"]
    resumed = subprocess.run([sys.executable, "-m", "orchestrator", "run", "--resume", str(run_dir)], check=False,
                             cwd=REPO, env=dict(adb_lab.env(EDGEFARM_RUNTIME_LIB=str(fake_runtime),
                                                            EDGEFARM_ALLOW_RUNTIME="1"), COLUMNS="200"),
                             capture_output=True, text=True, timeout=300)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert len(_jsonl(run_dir / "devices" / "google-pixel-8" / "results.jsonl")) == 3


def test_the_phones_version_file_is_always_the_one_this_run_pushed(adb_lab, fake_runtime, tmp_path):
    """A library with a VERSION beside it, then the same stub without one: the phone's lib/VERSION is
    replaced by one that names no version, so the runner says `version unknown` on every row (run
    anyway with EDGEFARM_ALLOW_RUNTIME=1), never the pinned version an earlier VERSION left there."""
    from android_runner.native.build import PINNED_VERSION
    from orchestrator.runners.android_choice import UNKNOWN_VERSION

    ds = _dataset(tmp_path, ["plain question", "another one"])
    on_phone = adb_lab.device_root("pixel8") / "local" / "tmp" / "edgefarm" / "lib" / "VERSION"
    args = ["run", "--devices", "google-pixel-8", "--dataset", str(ds)]
    p = edgefarm(adb_lab, *args, "--out", str(tmp_path / "a"), EDGEFARM_RUNTIME_LIB=str(fake_runtime),
                 EDGEFARM_ALLOW_RUNTIME="1")  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    assert on_phone.read_text() == (fake_runtime.parent / "VERSION").read_text()  # names PINNED_VERSION
    bare = tmp_path / "bare" / "liblitert-lm.so"  # the same stub, no VERSION beside it
    bare.parent.mkdir()
    bare.write_bytes(fake_runtime.read_bytes())
    p = edgefarm(adb_lab, *args, "--out", str(tmp_path / "b"), EDGEFARM_RUNTIME_LIB=str(bare))
    assert p.returncode == 3 and "version unknown" in p.stderr, p.stderr[-3000:]  # refused before it started
    p = edgefarm(
        adb_lab,
        *args,
        "--out",
        str(tmp_path / "c"),
        EDGEFARM_RUNTIME_LIB=str(bare),
        EDGEFARM_ALLOW_RUNTIME="1",
    )
    assert p.returncode == 0, p.stderr[-3000:]
    assert on_phone.read_text() == UNKNOWN_VERSION
    rows = _jsonl(_run_dir(tmp_path / "c") / "devices" / "google-pixel-8" / "results.jsonl")
    assert len(rows) == 2
    for r in rows:
        assert r["runtime_override"].endswith(", version unknown"), r["runtime_override"]
        assert PINNED_VERSION not in r["runtime_override"]


def _native_phone(lab, label: str):
    from orchestrator.devices.adb import AdbDevice

    runner, lib = lab.native_runner()
    serial = lab.serials[label]
    return AdbDevice(label, serial, server=lab.server_addrs[lab.owner[serial]], phone_runner="native",
                     native_runner=runner, runtime_lib=lib)  # fmt: skip


def _staged_job(lab, label: str, tmp_path: Path, run_id: str, timeout_s: float, limit: int):
    from orchestrator.jobs import JobOptions, write_bundle
    from orchestrator.models import BUNDLED_MODEL, inspect_model
    from orchestrator.runners.android_driver import AndroidRunner
    from orchestrator.runners.base import RunOptions

    dev = _native_phone(lab, label)
    samples = select_samples(load_dataset(BUNDLED_DATASET), ["text"], limit, None)
    items = write_bundle(samples, tmp_path / "bundle", JobOptions(max_output_tokens=8))
    opts = RunOptions(run_id=run_id, sample_timeout_s=timeout_s)
    adapter = AndroidRunner(dev)
    staged = adapter.stage(dev, tmp_path / "bundle", inspect_model(BUNDLED_MODEL), opts)
    return dev, adapter, staged, items, opts


HOOK_SLEEP_S = 5


def test_an_after_hook_sleeping_past_the_samples_deadline_keeps_the_answer(adb_lab, tmp_path):
    """The real runtime answers within the 4 s deadline; the phone's after-hook then sleeps 5 s. The row
    is ok with its answer (before issue 21 the hook ran inside the deadline: a timeout, the answer lost)."""
    from orchestrator.runners.base import RunnerEvents

    dev, adapter, staged, items, opts = _staged_job(adb_lab, "pixel8", tmp_path, "lab-slow-hook", 4, 2)
    driver = adb_lab.device_root("pixel8") / "local" / "tmp" / "edgefarm" / "driver" / "driver.sh"
    text = driver.read_text()
    slowed = text.replace('  snapshot battery "$S/battery_$PHASE"\n',
                          f'  [ "$PHASE" = after ] && sleep {HOOK_SLEEP_S}\n  snapshot battery "$S/battery_$PHASE"\n', 1)  # fmt: skip
    assert slowed != text
    driver.write_text(slowed)  # the next stage pushes the real one back (its sha256 differs)
    notes: list[str] = []
    results = adapter.execute(dev, staged, items, opts, RunnerEvents(note=notes.append))
    assert [r.status for r in results] == ["ok", "ok"], [(r.status, r.error) for r in results]
    # the row's time ends with the answer: the after-hook's 5 s are not in it
    assert all(r.output.strip() for r in results) and all(r.wall_ms < HOOK_SLEEP_S * 1000 for r in results)
    assert all(r.thermal_after for r in results)  # the slow hook still took its snapshot
    assert [r.max_output_tokens for r in results] == [8, 8]  # the job's cap, on the phone's rows (issue 36)


def test_a_phone_whose_results_file_refuses_writes_stops_saying_its_storage_is_full(adb_lab, tmp_path):
    """A full phone (the results file is /dev/full: ENOSPC): the runner's note of the refused write
    stops the job there, saying the phone's storage is full with the fix, and no row from the refused
    sample on is recorded (issue 34; issue 24 had the run go on without the phone's copy of its rows).
    The story through the CLI, with a /data that really fills and --resume: tests/lab/adb/test_data_full.py.

    /dev/full goes in after the driver has read back what the phone recorded (none yet): a full disk
    reads back what it holds, /dev/full reads zeros for ever (that read was a 60 s `cat` over adb)."""
    from orchestrator.errors import DeviceError
    from orchestrator.runners.base import RunnerEvents

    dev, adapter, staged, items, opts = _staged_job(adb_lab, "s24", tmp_path, "lab-full-results", 60, 3)
    job = adb_lab.device_root("s24") / "local" / "tmp" / "edgefarm" / "runs" / "lab-full-results" / "job"
    before_start = adapter._before_start

    def replay_then_fill_the_disk(*args) -> None:
        before_start(*args)
        (job / "results.jsonl").unlink(missing_ok=True)
        (job / "results.jsonl").symlink_to("/dev/full")

    adapter._before_start = replay_then_fill_the_disk
    notes: list[str] = []
    rows: list = []
    with pytest.raises(DeviceError) as err:
        adapter.execute(dev, staged, items, opts, RunnerEvents(note=notes.append, result=rows.append))
    said = str(err.value)
    assert "the phone's storage is full" in said and "results file refused sample 1" in said, said
    assert "No space left on device" in said and "df -h /data" in said and "--resume" in said, said
    assert any("results file refused sample 1" in n for n in notes), notes
    assert rows == []  # refused at sample 1: nothing recorded, all three run again on --resume
    assert _runners_of(job) == []  # the job's runner was stopped on the phone
