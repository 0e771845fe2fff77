"""lm-eval's own command line with `--model edgefarm` on this host (the real lm_eval 0.4 package, the real
runtime and the bundled tiny text model), on the local tasks tests/lab/lmeval/ (loglikelihood,
generate_until and loglikelihood_rolling over tiny.jsonl) in one invocation: each log-likelihood and each
rolling value equals what `edgefarm run --fidelity` records for the same text on the same device, each
generated answer is the run's greedy answer to the same prompt cut at the task's stop string
(tests/lab/lmeval_client.py), and the plugin's session is a run folder with a row per request."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..lmeval_client import check_against_fidelity_run, run_lm_eval
from .conftest import TINY_TEXT, edgefarm, only_run_dir, results


def test_lm_eval_with_the_edgefarm_model_equals_edgefarm_run(
    tmp_path: Path, local_inventory, lm_eval_path: Path
) -> None:
    inv = local_inventory()
    args = (
        f"device=this-host,backend=cpu,inventory={inv},model={TINY_TEXT},out={tmp_path / 'lm-runs'},db=none"
    )
    p = run_lm_eval(tmp_path, lm_eval_path, args, dict(os.environ))
    assert p.returncode == 0, p.stderr[-3000:]

    def run_fidelity(data: Path) -> list[dict]:
        run = edgefarm("run", "--devices", "this-host", "--inventory", str(inv), "--model", str(TINY_TEXT),
                       "--dataset", str(data), "--out", str(tmp_path / "runs"), "--db", "none", "--fidelity",
                       "--max-output-tokens", "16")  # fmt: skip
        assert run.returncode == 0, run.stderr[-3000:]
        return results(only_run_dir(tmp_path / "runs"))

    scored = check_against_fidelity_run(tmp_path, TINY_TEXT, run_fidelity)

    # the plugin's session is a run folder: one row per request (scored and generated), reports
    lm_run = only_run_dir(tmp_path / "lm-runs")
    lm_rows = results(lm_run)
    assert len(lm_rows) == scored + 3 and all(r["status"] == "ok" for r in lm_rows)
    assert sum(1 for r in lm_rows if r.get("fidelity")) == scored
    assert json.loads((lm_run / "run.json").read_text())["kind"] == "serve"
    assert (lm_run / "report.json").is_file()
