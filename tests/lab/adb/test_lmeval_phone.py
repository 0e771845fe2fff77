"""lm-eval's own command line with `--model edgefarm` on a lab phone: the adb lab's Pixel 8 behind its real
adb server, edgefarm's native runner in its serve mode on the real runtime's C API (the scoring pass
`--fidelity` drives: android_runner/native/fidelity.c). One lm-eval invocation runs the local tasks
tests/lab/lmeval/ (loglikelihood, generate_until, loglikelihood_rolling); each log-likelihood and each
rolling value equals what `edgefarm run --fidelity` records on the same phone for the same text, each
generated answer the run's greedy answer (tests/lab/lmeval_client.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ..lmeval_client import REPO, check_against_fidelity_run, run_lm_eval

PIXEL = "google-pixel-8"
TINY_TEXT = REPO / "data" / "models" / "tiny-text.litertlm"


def _rows(run_dir: Path) -> list[dict]:
    return [json.loads(x) for x in (run_dir / "devices" / PIXEL / "results.jsonl").read_text().splitlines()]


def test_lm_eval_on_a_lab_phone_equals_edgefarm_run_fidelity(
    adb_lab, lm_eval_path: Path, tmp_path: Path
) -> None:
    env = adb_lab.env(COLUMNS="200")
    args = f"device={PIXEL},backend=cpu,model={TINY_TEXT},out={tmp_path / 'lm-runs'},db=none"
    p = run_lm_eval(tmp_path, lm_eval_path, args, env)
    assert p.returncode == 0, p.stderr[-3000:]

    def run_fidelity(data: Path) -> list[dict]:
        env_run = {k: v for k, v in env.items() if k != "EDGEFARM_INVENTORY"}
        run = subprocess.run(
            [sys.executable, "-m", "orchestrator", "run", "--devices", PIXEL, "--model", str(TINY_TEXT),
             "--dataset", str(data), "--out", str(tmp_path / "runs"), "--db", "none", "--fidelity",
             "--max-output-tokens", "16"],
            cwd=REPO, env=env_run, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr[-3000:]
        (run_dir,) = [d for d in (tmp_path / "runs").iterdir() if d.is_dir()]
        rows = _rows(run_dir)
        assert rows and all(r["runner"] == "native" for r in rows)  # the phone's C scoring pass
        return rows

    scored = check_against_fidelity_run(tmp_path, TINY_TEXT, run_fidelity)

    # the plugin's session on the phone: the native runner answered every request, one row each
    (lm_run,) = [d for d in (tmp_path / "lm-runs").iterdir() if d.is_dir()]
    rows = _rows(lm_run)
    assert len(rows) == scored + 3 and all(r["status"] == "ok" and r["runner"] == "native" for r in rows)
    assert json.loads((lm_run / "run.json").read_text())["kind"] == "serve"
