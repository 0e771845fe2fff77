"""The device x backend matrix on lab phones (issue 44, docs/matrix.md): `edgefarm run --backend cpu,gpu`
runs each phone's backends in turn through the native runner on this host's REAL liblitert-lm.so.

This host's library has no GPU, so a phone on it shows a phone without one (gpu_unavailable in its cell,
exit 6). A phone GPU is stood in for by gpu_runtime.c (a library wrapping the real one: the gpu backend
creates the real CPU engine, then turns a seeded FLIPS of the first 60 replies into a wrong answer; FLIPS=0
is an unperturbed GPU path). The dataset is 60 of the tiny model's canned text prompts, which the CPU answers
right every time, so each flipped reply is a verdict that flips."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .runtime_wrap import gpu_runtime

REPO = Path(__file__).resolve().parents[3]
CANNED = json.loads((REPO / "data" / "models" / "canned.json").read_text())
SAMPLES = 60
FLIPS = 20
MIXED_LIMIT = 20  # the run with an unperturbed GPU, a phone without one and an NPU none has


def canned_text(root: Path) -> Path:
    """An EdgeMMEval-format set of 60 rows cycling through the canned single-turn text prompts."""
    texts = [c for c in CANNED if not c.get("media") and not c.get("history")]
    split = root / "data" / "test"
    split.mkdir(parents=True)
    rows = [{"test_id": f"CAN-{i + 1:03d}", "task": "qa", "modality": "text", "prompt": c["prompt"],
             "reference": c["answer"], "reference_variants": [c["answer"]]}
            for i, c in enumerate(texts[i % len(texts)] for i in range(SAMPLES))]  # fmt: skip
    (split / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


@pytest.fixture(scope="module")
def matrix_lab(adb_lab, tmp_path_factory):
    """run(libs, tag): `edgefarm run --backend cpu,gpu` over the three phones, each on the library named
    (None: the real one, no GPU); the run folder, the process and report.json."""
    tmp = tmp_path_factory.mktemp("matrix")
    _, real_lib = adb_lab.native_runner()
    dataset = canned_text(tmp / "canned")
    host_b = f"127.0.0.1:{adb_lab.servers[1].port}"
    phones = (
        ("pixel-8", "pixel8", ""),
        ("sm-s921b", "s24", ""),
        ("redmi", "redmi", f"    server: '{host_b}'\n"),
    )

    def command(libs: dict[str, Path | None], tag: str, *extra: str, backends: str = "cpu,gpu"):
        """`edgefarm run`'s argv over the three phones, its environment and its --out folder."""
        inv = tmp / f"devices-{tag}.yaml"
        text = f"adb_servers: [{host_b}]\ndevices:\n"
        for name, label, more in phones:
            lib = libs.get(name)
            text += f"  - name: {name}\n    kind: adb\n    serial: '{adb_lab.serials[label]}'\n{more}"
            if lib is not None:
                text += f"    runtime_lib: '{lib}'\n    libs: ['{lib.parent / 'liblitert-lm-real.so'}']\n"
        inv.write_text(text)
        out = tmp / f"runs-{tag}"
        env = adb_lab.env(COLUMNS="100", EDGEFARM_ALLOW_RUNTIME="1")  # the stand-in is not the pinned library
        env.pop("EDGEFARM_INVENTORY", None)
        argv = [sys.executable, "-m", "orchestrator", "run", "--devices", ",".join(n for n, _, _ in phones),
                "--inventory", str(inv), "--backend", backends, "--dataset", str(dataset),
                "--max-output-tokens", "16", "--out", str(out), "--sample-timeout", "60", *extra]  # fmt: skip
        return argv, env, out

    def run(libs: dict[str, Path | None], tag: str, *extra: str, backends: str = "cpu,gpu"):
        argv, env, out = command(libs, tag, *extra, backends=backends)
        p = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env, cwd=REPO, check=False)
        return finished(out, p)

    flipping = {
        n: gpu_runtime(tmp / f"gpu20-{n}", real_lib, FLIPS, SAMPLES, seed)
        for seed, (n, _, _) in enumerate(phones)
    }
    # the first run scores the references too (docs/fidelity.md)
    first = run(flipping, "flips", "--fidelity")
    clean = gpu_runtime(tmp / "gpu0", real_lib, 0, SAMPLES, 0)
    # an unperturbed GPU answers as the CPU on every sample, so 20 of them show it as well as 60; a rerun
    # on the phones the first run staged: it only has to find the model there
    mixed = run(
        {"pixel-8": clean, "sm-s921b": None, "redmi": clean},
        "mixed",
        "--limit",
        str(MIXED_LIMIT),
        backends="cpu,gpu,npu",
    )
    return {"flips": first, "mixed": mixed, "command": command, "run": run, "clean": clean,
            "phones": [n for n, _, _ in phones]}  # fmt: skip


def finished(out: Path, p) -> tuple[Path, subprocess.CompletedProcess, dict]:
    """The run folder in `out`, the process, and its report.json ({} without one)."""
    (run_dir,) = [d for d in out.iterdir() if d.is_dir()]
    report = json.loads((run_dir / "report.json").read_text()) if (run_dir / "report.json").is_file() else {}
    return run_dir, p, report


def _rows(folder: Path) -> dict[str, dict]:
    rows = [json.loads(x) for x in (folder / "results.jsonl").read_text().splitlines()]
    return {r["id"]: r for r in rows}


def test_each_phone_runs_each_backend_once_on_the_same_samples(matrix_lab, adb_lab):
    run_dir, p, _ = matrix_lab["flips"]
    assert p.returncode in (0, 1), p.stderr[-3000:]
    assert "60 samples, 3 device(s) x backends = 6 units" in p.stdout + p.stderr
    for name in ("pixel-8", "sm-s921b", "redmi"):
        cpu, gpu = _rows(run_dir / "devices" / f"{name}@cpu"), _rows(run_dir / "devices" / f"{name}@gpu")
        assert list(cpu) == list(gpu) and len(cpu) == SAMPLES
        assert {r["backend"] for r in cpu.values()} == {"cpu"} and {r["backend"] for r in gpu.values()} == {
            "gpu"
        }
        assert all(r["status"] == "ok" for r in (*cpu.values(), *gpu.values()))
        flipped = [i for i in cpu if cpu[i]["output"] != gpu[i]["output"]]
        assert len(flipped) == FLIPS and all(gpu[i]["output"] == "drifted" for i in flipped)
        for backend in ("cpu", "gpu"):  # one model load per device x backend: the runner's READY lines
            outcome = json.loads((run_dir / "devices" / f"{name}@{backend}" / "outcome.json").read_text())
            assert outcome["model_loads"] == 1, (name, backend, outcome["model_loads"])


def test_the_phone_records_one_engine_load_per_backend(matrix_lab, adb_lab):
    """The native runner's own loads.tsv on the phone (a line per engine created), per backend's job folder."""
    run_dir, _, _ = matrix_lab["flips"]
    run_id = run_dir.name
    for label in ("pixel8", "s24", "redmi"):
        runs = adb_lab.device_root(label) / "local" / "tmp" / "edgefarm" / "runs" / run_id
        for backend in ("cpu", "gpu"):
            loads = (runs / f"job@{backend}" / "loads.tsv").read_text().splitlines()
            assert len(loads) == 1, (label, backend, loads)


def test_the_second_backend_and_a_rerun_push_no_model_byte(matrix_lab):
    """The first run's second backend on each phone, and every unit of the rerun (the mixed run, its cells
    that did not run included): the model found on the phone by its hash, no byte of it sent."""
    pushed = {}
    for tag in ("flips", "mixed"):
        run_dir = matrix_lab[tag][0]
        for folder in sorted((run_dir / "devices").iterdir()):
            push = json.loads((folder / "outcome.json").read_text())["model_push"]
            pushed[(tag, folder.name)] = (push["bytes_sent"], push["files_skipped"])
    later = {k: v for k, v in pushed.items() if k[0] == "mixed" or k[1].endswith("@gpu")}
    assert len(later) == 3 + 9 and all(v == (0, 1) for v in later.values()), pushed


def test_a_phone_without_a_gpu_is_a_cell_with_its_reason_and_exit_6(matrix_lab):
    run_dir, p, _ = matrix_lab["mixed"]
    assert p.returncode == 6, (p.returncode, p.stderr[-3000:])
    outcome = json.loads((run_dir / "devices" / "sm-s921b@gpu" / "outcome.json").read_text())
    assert outcome["error_code"] == 6 and "gpu_unavailable" in outcome["error"]
    assert not (run_dir / "devices" / "sm-s921b@gpu" / "results.jsonl").is_file() or not _rows(
        run_dir / "devices" / "sm-s921b@gpu"
    )  # never a silent CPU run
    for name in ("pixel-8", "redmi"):  # the unperturbed GPU path: the CPU's answers
        cpu, gpu = _rows(run_dir / "devices" / f"{name}@cpu"), _rows(run_dir / "devices" / f"{name}@gpu")
        assert all(cpu[i]["output"] == gpu[i]["output"] for i in cpu)


def test_the_report_flags_the_flipping_gpu_on_every_phone_with_its_flips(matrix_lab):
    run_dir, p, report = matrix_lab["flips"]
    m = report["matrix"]
    assert m["devices"] == ["pixel-8", "sm-s921b", "redmi"] and m["backends"] == ["cpu", "gpu"]
    for name in m["devices"]:
        cpu, gpu = _rows(run_dir / "devices" / f"{name}@cpu"), _rows(run_dir / "devices" / f"{name}@gpu")
        cell = next(c for c in m["cells"] if c["unit"] == f"{name}@gpu")
        turned = {i for i in cpu if cpu[i]["output"] != gpu[i]["output"]}
        assert cell["flagged"] and cell["p_value"] < 1e-5 and cell["diff_pts"] == -33.3
        assert {f["id"] for f in cell["flips"]} == turned and len(turned) == FLIPS
        assert all(f["cpu_passed"] and not f["passed"] and f["output"] == "drifted" for f in cell["flips"])
        assert f"{name}/gpu ⚑ 20 verdict(s) differ from {name}@cpu" in p.stdout
    md = (run_dir / "report.md").read_text()
    assert "## Backend matrix" in md and "### Verdicts that flip against the same device's CPU" in md
    html = (run_dir / "report.html").read_text()
    assert "<table class='matrix'>" in html and html.count("<details id='flips-") == 3


def test_an_unperturbed_gpu_is_not_flagged_and_the_missing_one_is_a_cell_with_its_reason(matrix_lab):
    _, p, report = matrix_lab["mixed"]
    cells = {c["unit"]: c for c in report["matrix"]["cells"]}
    for name in ("pixel-8", "redmi"):
        gpu = cells[f"{name}@gpu"]
        assert not gpu["flagged"] and gpu["flips"] == [] and gpu["p_value"] == 1.0
    missing = cells["sm-s921b@gpu"]
    assert missing["samples"] == 0 and missing["reason"].startswith("gpu_unavailable: ")
    assert "sm-s921b/gpu did not run: gpu_unavailable" in p.stdout + p.stderr


def test_with_fidelity_each_flip_names_its_first_differing_token_and_the_gap_is_measured(matrix_lab):
    """The stand-in GPU computes with the real CPU engine and only turns the decoded text: the reference
    answers score the same (|Δ log p| 0 against the CPU unit), the turned answers differ from token 0."""
    _, p, report = matrix_lab["flips"]
    assert p.returncode in (0, 1), p.stderr[-3000:]
    for c in report["matrix"]["cells"]:
        if c["backend"] == "gpu":
            assert c["flagged"] and len(c["flips"]) == FLIPS and c["mean_abs_dlogp"] == 0.0, c["unit"]
            assert {f["first_diff"] for f in c["flips"]} == {0}


def test_an_npu_this_hosts_library_cannot_give_is_never_a_silent_cpu_run(matrix_lab):
    """The x86 library has no NPU: each phone's npu cell did not run and says why, or, had the runtime
    answered on its CPU, says it fell back; it never shows CPU figures as the NPU's."""
    _, _, report = matrix_lab["mixed"]
    npu = [c for c in report["matrix"]["cells"] if c["backend"] == "npu"]
    assert len(npu) == 3
    for c in npu:  # the runtime's generic NPU path ran on the CPU: each row an error with its words
        assert not c["ran"] and not c["flagged"] and c["flips"] == [], c
        assert c["reason"].startswith(("backend_fallback: asked npu", "npu_")), c


LIMIT, REPEAT = 4, 2  # a unit's rows: LIMIT first runs (results.jsonl) and LIMIT more (repeats.jsonl)


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()] if path.is_file() else []


def _matrix_shape(run_dir: Path) -> list[list[str]]:
    """report.md's matrix table with every number written `#` and no ★ (a star is a finding, not shape):
    its header, its rows' devices and each cell's lines."""
    md = (run_dir / "report.md").read_text().split("## Backend matrix", 1)[1].split("\n\n")[1]
    return [[re.sub(r"[-+]?\d+(\.\d+)?", "#", c).replace(" ★", "").strip() for c in row.split(" | ")]
            for row in md.splitlines()]  # fmt: skip


def test_a_matrix_run_killed_after_its_first_rows_resumes_to_exactly_what_was_asked(matrix_lab):
    """Issue 44: `run --backend cpu,gpu --limit 4 --repeat 2`, SIGKILLed (the controller alone, as `kill -9`)
    once its first rows stream in; `--resume` finishes every unit: LIMIT x REPEAT rows each, every sample
    REPEAT times, on its own backend; no model byte pushed again; the matrix table has the shape of the
    same run uninterrupted (the GPU stand-in unperturbed: both runs' answers are the CPU engine's)."""
    clean = {n: matrix_lab["clean"] for n in matrix_lab["phones"]}
    flags = ("--limit", str(LIMIT), "--repeat", str(REPEAT))
    whole_dir, whole, _ = matrix_lab["run"](clean, "whole", *flags)
    assert whole.returncode == 0, whole.stderr[-3000:]
    argv, env, out = matrix_lab["command"](clean, "killed", *flags)
    proc = subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    streamed = lambda: sum(len(_lines(f)) for f in out.glob("*/devices/*/results.stream.jsonl"))
    deadline = time.monotonic() + 120
    while streamed() < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.kill()
    assert proc.wait(timeout=30) == -9, "the run ended before its first rows were streamed"
    (run_dir,) = [d for d in out.iterdir() if d.is_dir()]
    units = [f"{n}@{b}" for n in matrix_lab["phones"] for b in ("cpu", "gpu")]
    asked = LIMIT * REPEAT
    rows_at_kill = sum(len(_lines(run_dir / "devices" / u / "results.stream.jsonl")) for u in units)
    assert 0 < rows_at_kill < asked * len(units)
    resumed = subprocess.run([sys.executable, "-m", "orchestrator", "run", "--resume", str(run_dir)], cwd=REPO,
                             env=env, capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    flags_kept = json.loads((run_dir / "run.json").read_text())["flags"]
    assert (flags_kept["repeat"], flags_kept["backend"], flags_kept["limit"]) == (REPEAT, "cpu,gpu", LIMIT)
    ids = [f"CAN-{i:03d}" for i in range(1, LIMIT + 1)]
    for unit in units:
        folder = run_dir / "devices" / unit
        first, more = _lines(folder / "results.jsonl"), _lines(folder / "repeats.jsonl")
        assert [r["id"] for r in first] == ids, (unit, [r["id"] for r in first])
        assert len(first) + len(more) == asked, (unit, len(first), len(more))
        every = first + more  # each sample REPEAT times, each run once
        assert sorted(r["id"].split("@")[0] for r in every) == sorted(ids * REPEAT), unit
        assert len({r["id"] for r in every}) == asked, unit
        assert all(r["status"] == "ok" and r["backend"] == unit.split("@")[1] for r in every), unit
        outcome = json.loads((folder / "outcome.json").read_text())
        assert outcome["model_push"]["bytes_sent"] == 0 and outcome["error"] == "", (unit, outcome)
    report = json.loads((run_dir / "report.json").read_text())
    cells = {c["unit"]: c for c in report["matrix"]["cells"]}
    assert sorted(cells) == sorted(units) and all(c["ran"] and c["samples"] == LIMIT for c in cells.values())
    assert _matrix_shape(run_dir) == _matrix_shape(whole_dir)
