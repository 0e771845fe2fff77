"""lm-eval's own command line with `--model edgefarm`, as a user runs it, on the local task pair
tests/lab/lmeval/ (loglikelihood, generate_until, loglikelihood_rolling over tiny.jsonl), and the dataset
that makes `edgefarm run --fidelity` score the same texts. Shared by the lab tests of this host
(tests/lab/local/test_lmeval.py) and of phones (tests/lab/adb/test_lmeval_phone.py)."""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from orchestrator.models import inspect_model
from orchestrator.serve.harness import text_windows, window_bytes

from .ssh.aarch64 import default_cache

REPO = Path(__file__).resolve().parents[2]
TASKS = REPO / "tests" / "lab" / "lmeval"
TASK_NAMES = ("edgefarm_tiny_ll", "edgefarm_tiny_gen", "edgefarm_tiny_rolling")
LM_EVAL = "lm_eval==0.4.13"  # the release the plugin is written against (pyproject.toml: the lmeval extra)


# what LM_EVAL adds to the suite's venv, as pip resolved it
PINS = Path(__file__).with_name("lmeval-pins.txt")
PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check"]


def lm_eval_target() -> Path:
    """lm-eval in a folder of its own, on the lm-eval child's PYTHONPATH only: the suite's venv stays without
    it (it brings scipy, which nltk's init then imports into every run, docs/dependencies.md). Only what
    the venv lacks goes there, from the package registry, once per lab cache (EDGEFARM_LAB_CACHE, as the
    aarch64 board's), set of packages in the venv and pins; a lock keeps two pytest workers from installing it
    at once. The pins of lmeval-pins.txt go in without their dependencies and without byte-compiling (Python
    compiles the few hundred modules lm-eval imports when it first runs, not all 5,000 of pandas, scipy,
    scikit-learn and pyarrow), then `pip check` asks whether they fit the venv; when the venv has moved on
    and they do not, pip's own resolution against the venv (resolve_pins) picks them again."""
    have = sorted(f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions())
    venv = hashlib.sha256("\n".join([*have, PINS.read_text()]).encode()).hexdigest()[:12]
    target = default_cache() / f"{LM_EVAL.replace('==', '-')}-{venv}"
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / ".complete").is_file():
            return target
        pins = [x for x in PINS.read_text().splitlines() if x and not x.startswith("#")]
        _install(target, pins)
        if not _pins_fit(target, pins):
            pins = resolve_pins()
            _install(target, pins)
        (target / ".complete").write_text("\n".join(pins))
        return target


def resolve_pins() -> list[str]:
    """What pip would add to this venv for LM_EVAL (its dry run's report), each as name==version."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        p = subprocess.run([*PIP, "install", "-q", "--dry-run", "--report", str(report), LM_EVAL],
                           capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
        assert p.returncode == 0, p.stderr[-3000:]
        install = json.loads(report.read_text())["install"]
    return [f"{i['metadata']['name']}=={i['metadata']['version']}" for i in install]


def _install(target: Path, pins: list[str]) -> None:
    shutil.rmtree(target, ignore_errors=True)
    p = subprocess.run([*PIP, "install", "-q", "--no-deps", "--no-compile", "--target", str(target), *pins],
                       capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]


def _pins_fit(target: Path, pins: list[str]) -> bool:
    """`pip check` over the venv with `target` first on the path: none of the pinned packages lacks a
    dependency or has one at a version it does not accept (the venv's own packages are not judged here)."""
    p = subprocess.run([*PIP, "check"], env={**os.environ, "PYTHONPATH": str(target)}, capture_output=True,
                       text=True, timeout=300, check=False)  # fmt: skip
    names = {_canonical(pin.split("==")[0]) for pin in pins}
    return not [line for line in p.stdout.splitlines() if _canonical(line.split(" ")[0]) in names]


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def run_lm_eval(out: Path, lm_eval_path: Path, model_args: str, env: dict, *extra: str,
                tasks: tuple[str, ...] = TASK_NAMES) -> subprocess.CompletedProcess:  # fmt: skip
    """`edgefarm-lm-eval run --model edgefarm ...` (lm-eval's own CLI, the launcher registering the model)
    on the local tasks, samples logged under `out`; offline (no hub, no download)."""
    env = {**env, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_HOME": str(out / "hf"),
           "PYTHONPATH": os.pathsep.join([str(lm_eval_path), str(REPO)])}  # fmt: skip
    env.pop("EDGEFARM_INVENTORY", None)
    return subprocess.run(
        [sys.executable, "-c", "from orchestrator.serve.lmeval import main; main()", "run", "--model", "edgefarm",
         "--model_args", model_args, "--include_path", str(TASKS), "--tasks", ",".join(tasks),
         "--output_path", str(out / "lm-out"), "--log_samples", *extra],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def samples(out: Path, task: str) -> list[dict]:
    """lm-eval's logged samples of one task, in the order of tiny.jsonl."""
    (path,) = (out / "lm-out").glob(f"*/samples_{task}_*.jsonl")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return sorted(rows, key=lambda s: s["doc_id"])


def arg(sample: dict, n: int) -> str:
    """A logged request's n-th argument (lm-eval logs `arguments.gen_args_0.arg_N`)."""
    return sample["arguments"]["gen_args_0"][f"arg_{n}"]


def fidelity_dataset(folder: Path, rows: list[tuple[str, str]]) -> Path:
    """An EdgeMMEval dataset of one-turn text rows (prompt, reference), ids TXT-001...: what `edgefarm run
    --fidelity` scores, each reference teacher-forced after its prompt."""
    (folder / "data" / "test").mkdir(parents=True)
    lines = [json.dumps({"test_id": f"TXT-{n:03d}", "modality": "text", "task": "qa", "prompt": prompt,
                         "reference": ref, "reference_variants": [ref, ref.strip() + "."]})
             for n, (prompt, ref) in enumerate(rows, 1)]  # fmt: skip
    (folder / "data" / "test" / "metadata.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def check_against_fidelity_run(out: Path, model: Path, run_fidelity: Callable[[Path], list[dict]]) -> int:
    """lm-eval's logged samples of the three tasks against `edgefarm run --fidelity` of the same texts on the
    same device (`run_fidelity(dataset)` -> the run's rows): each log-likelihood equals the sum of the run's
    per-token scores of the continuation after the context (the row's logp_sum); each rolling value the sum
    over the text's windows (harness.text_windows) of the run's scores of each window from the session's
    start (a sample with an empty prompt); each generated
    answer the run's greedy answer cut at the task's stop string (a newline). Equal, not close. Returns the
    number of scoring requests lm-eval made (one per continuation, one per window)."""
    ll, gen, roll = (samples(out, t) for t in TASK_NAMES)
    assert len(ll) == len(gen) == len(roll) == 3
    windows = [text_windows(arg(s, 0), window_bytes(inspect_model(model).max_context_tokens)) for s in roll]
    assert [len(w) for w in windows[:2]] == [1, 1] and len(windows[2]) > 1, windows  # the third: several
    asked = [*((arg(s, 0), arg(s, 1)) for s in ll), *((arg(s, 0), "x") for s in gen),
             *(("", w) for ws in windows for w in ws)]  # fmt: skip
    rows = {r["id"]: r for r in run_fidelity(fidelity_dataset(out / "ds", asked))}
    ids = iter(f"TXT-{n:03d}" for n in range(1, len(asked) + 1))

    def scored() -> float:
        f = rows[next(ids)]["fidelity"]
        assert f["target_tokens"] >= len(f["logp"]) > 0 and not f["unscored"], f
        if f["target_tokens"] == len(f["logp"]):  # every score kept: the sum is theirs, added in order
            total = 0.0
            for x in f["logp"]:
                total += x
            assert f["logp_sum"] == total, f
        return f["logp_sum"]

    for s in ll:
        assert float(s["resps"][0][0][0]) == scored(), s["arguments"]
    for s in gen:
        row = rows[next(ids)]
        assert row["output"] and s["resps"][0][0] == row["output"].split("\n")[0], (s["resps"], row["output"])
    for s, ws in zip(roll, windows):
        assert float(s["resps"][0][0]) == sum(scored() for _ in ws), (s["resps"], ws)
    return len(ll) + sum(map(len, windows))
