"""lm-eval's own command line with `--model edgefarm` on this host (the real lm_eval 0.4 package, the real
runtime and the bundled tiny text model), on the local task tests/lab/lmeval/ (a loglikelihood task and a
generate_until task over tiny.jsonl): each log-likelihood equals the sum of the per-token scores
`edgefarm run --fidelity` records for the same text on the same device, each generated answer is the
run's greedy answer to the same prompt cut at the task's stop string, and the plugin's session is a run
folder with a row per request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..ssh.aarch64 import default_cache
from .conftest import REPO, TINY_TEXT, edgefarm, only_run_dir, results

TASKS = REPO / "tests" / "lab" / "lmeval"
LM_EVAL = "lm_eval==0.4.13"  # the release the plugin is written against (pyproject.toml: the lmeval extra)


@pytest.fixture(scope="session")
def lm_eval_path() -> Path:
    """lm-eval in a folder of its own, on the lm-eval child's PYTHONPATH only: the suite's venv stays without
    it (it brings scipy, which nltk's init then imports into every run, docs/dependencies.md). Only what
    the venv lacks goes there (pip's own resolution against the venv, then those pins without deps), once
    per lab cache (EDGEFARM_LAB_CACHE, as the aarch64 board's)."""
    target = default_cache() / LM_EVAL.replace("==", "-")
    if (target / ".complete").is_file():
        return target
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    report = target.with_suffix(".report.json")
    report.parent.mkdir(parents=True, exist_ok=True)
    p = subprocess.run([*pip, "install", "-q", "--dry-run", "--report", str(report), LM_EVAL],
                       capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    pins = [
        f"{i['metadata']['name']}=={i['metadata']['version']}"
        for i in json.loads(report.read_text())["install"]
    ]
    p = subprocess.run([*pip, "install", "-q", "--no-deps", "--target", str(target), *pins],
                       capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    (target / ".complete").write_text("\n".join(pins))
    return target


def _lm_eval(tmp_path: Path, inv: Path, lm_eval_path: Path, *extra: str) -> subprocess.CompletedProcess:
    args = (
        f"device=this-host,backend=cpu,inventory={inv},model={TINY_TEXT},out={tmp_path / 'lm-runs'},db=none"
    )
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf"),
           "PYTHONPATH": os.pathsep.join([str(lm_eval_path), str(REPO)])}  # fmt: skip
    env.pop("EDGEFARM_INVENTORY", None)
    return subprocess.run(
        [sys.executable, "-c", "from orchestrator.serve.lmeval import main; main()", "run", "--model", "edgefarm",
         "--model_args", args, "--include_path", str(TASKS), "--output_path", str(tmp_path / "lm-out"),
         "--log_samples", *extra],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def _samples(tmp_path: Path, task: str) -> list[dict]:
    (path,) = (tmp_path / "lm-out").glob(f"*/samples_{task}_*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def _dataset(folder: Path, rows: list[tuple[str, str]]) -> Path:
    """An EdgeMMEval dataset of one-turn text rows (prompt, reference): what `run --fidelity` scores."""
    (folder / "data" / "test").mkdir(parents=True)
    lines = [json.dumps({"test_id": f"TXT-{n:03d}", "modality": "text", "task": "qa", "prompt": prompt,
                         "reference": ref, "reference_variants": [ref, ref.strip() + "."]})
             for n, (prompt, ref) in enumerate(rows, 1)]  # fmt: skip
    (folder / "data" / "test" / "metadata.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def test_lm_eval_with_the_edgefarm_model_equals_edgefarm_run(
    tmp_path: Path, local_inventory, lm_eval_path: Path
) -> None:
    inv = local_inventory()
    p = _lm_eval(tmp_path, inv, lm_eval_path, "--tasks", "edgefarm_tiny_ll,edgefarm_tiny_gen")
    assert p.returncode == 0, p.stderr[-3000:]
    ll = _samples(tmp_path, "edgefarm_tiny_ll")
    gen = _samples(tmp_path, "edgefarm_tiny_gen")
    assert len(ll) == len(gen) == 3
    pairs = [(s["arguments"]["gen_args_0"]["arg_0"], s["arguments"]["gen_args_0"]["arg_1"]) for s in ll]
    prompts = [s["arguments"]["gen_args_0"]["arg_0"] for s in gen]

    # the same texts through `edgefarm run --fidelity` on the same device: its recorded scores
    data = _dataset(tmp_path / "ds", [*pairs, *((q, "x") for q in prompts)])
    run = edgefarm("run", "--devices", "this-host", "--inventory", str(inv), "--model", str(TINY_TEXT),
                   "--dataset", str(data), "--out", str(tmp_path / "runs"), "--db", "none", "--fidelity",
                   "--max-output-tokens", "16")  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    rows = {r["id"]: r for r in results(only_run_dir(tmp_path / "runs"))}
    for n, s in enumerate(ll, 1):
        f = rows[f"TXT-{n:03d}"]["fidelity"]
        assert f["target_tokens"] == len(f["logp"]) > 0, f
        assert float(s["resps"][0][0][0]) == sum(f["logp"]), (s["arguments"], f)
    for n, s in enumerate(gen, len(ll) + 1):
        answer = rows[f"TXT-{n:03d}"]["output"]
        assert answer, rows[f"TXT-{n:03d}"]
        assert s["resps"][0][0] == answer.split("\n")[0], (s["resps"], answer)

    # the plugin's session is a run folder: one row per request (3 scored, 3 generated), reports
    lm_run = only_run_dir(tmp_path / "lm-runs")
    lm_rows = results(lm_run)
    assert len(lm_rows) == 6 and all(r["status"] == "ok" for r in lm_rows)
    assert sum(1 for r in lm_rows if r.get("fidelity")) == 3
    assert json.loads((lm_run / "run.json").read_text())["kind"] == "serve"
    assert (lm_run / "report.json").is_file()
