#!/usr/bin/env python3
"""evalscope's own CLI against `edgefarm serve`, checked against `edgefarm run` (issue 43, docs/serve.md).

    python scripts/evalscope_against_serve.py [--devices this-host] [--inventory devices.yaml]
        [--venv DIR] [--max-tokens 8] [--json]

1. evalscope==1.14.1 in a venv of its own (`--venv`, default $EDGEFARM_CACHE_DIR/evalscope-1.14.1; made and
   installed when missing): it is the user's tool, never edgefarm's dependency.
2. evalscope's example files as the project writes them (tests/lab/evalscope_examples.py: a General-VQA
   JSONL with an image_url row, an `<image 1>` row with a system message and a text row; a General-VMCQ
   JSONL with an image question and a text question; General-MCQ's example_val.csv / example_dev.csv in
   evalscope's own layout, id,category,question,A..D,answer,explanation, in a folder of their own).
3. `edgefarm serve --devices D` (the bundled tiny multimodal model), then for each served model id
   `evalscope eval --eval-type openai_api --api-url http://127.0.0.1:PORT/v1 --model ID --datasets
   general_vqa general_vmcq general_mcq` on those files (greedy: temperature 0), from the files' folder
   (evalscope reads an image_url path relative to its working directory).
4. `edgefarm run` of the same files on the same devices (greedy, the same max tokens).
5. Per sample: evalscope's answer (its review file) equals the run's answer on that device (a sample is
   matched by its `id` column when the file has one, else by its row number), and for text prompts
   (General-MCQ's, and any other sent as plain text) the user message evalscope sent equals the prompt
   edgefarm renders; per metric:
   evalscope's score (its report) equals the run's (run.json/report.json metrics) to 1e-9. A metric
   evalscope could not compute (its review names the error: nltk's punkt_tab data, which it downloads at
   run time, cannot be fetched here) is listed as such, not compared.

Exit 0 when every prompt, answer and computed score agrees, 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from orchestrator.datasets import load_dataset
from orchestrator.fsutil import cache_dir
from tests.lab.evalscope_examples import write_examples, write_mcq_examples
from tests.lab.serve_client import KEY, TINY_MM, Server

EVALSCOPE = "evalscope==1.14.1"
PHONES = ("google-pixel-8", "samsung-sm-s921b")  # the lab's two phones' device names (--lab-phones)
# evalscope dataset -> (edgefarm --format, the example file's subset name, its folder under the files)
DATASETS = {
    "general_vqa": ("general_vqa", "example_openai", "."),
    "general_vmcq": ("general_vmcq", "example", "."),
    "general_mcq": ("general_mcq", "example", "mcq"),  # its own folder: it would read VMCQ's example.jsonl
}
NO_ID = "unknown"  # general_mcq's sample metadata id for a row without an `id` column


def evalscope_venv(folder: Path) -> Path:
    """evalscope's own command, installed into `folder` once."""
    exe = folder / "bin" / "evalscope"
    if not exe.is_file():
        print(f"installing {EVALSCOPE} into {folder} (once)", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
        subprocess.run([str(folder / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", EVALSCOPE],
                       check=True)  # fmt: skip
    return exe


def metric_key(identity: dict) -> str:
    """evalscope's metric identity -> edgefarm's name (BLEU-1, ROUGE-L-F, Accuracy)."""
    name, dims = identity["name"], identity.get("dimensions") or {}
    if name == "bleu":
        return f"BLEU-{dims['ngram']}"
    if name == "rouge":
        gram = str(dims.get("variant") or dims.get("ngram")).upper()
        return f"ROUGE-{gram}-{ {'recall': 'R', 'precision': 'P', 'f1': 'F'}[dims['statistic']] }"
    return {"accuracy": "Accuracy", "acc": "Accuracy"}.get(name, name)


def run_evalscope(exe: Path, url: str, model: str, files: Path, work: Path, max_tokens: int) -> Path:
    args = {
        d: {"local_path": str(files / folder), "subset_list": [subset]}
        for d, (_, subset, folder) in DATASETS.items()
    }
    p = subprocess.run(
        [str(exe), "eval", "--eval-type", "openai_api", "--api-url", url, "--api-key", KEY, "--model", model,
         "--datasets", *DATASETS, "--dataset-args", json.dumps(args), "--work-dir", str(work),
         "--generation-config", json.dumps({"temperature": 0, "max_tokens": max_tokens})],
        cwd=files, capture_output=True, text=True, timeout=1800, check=False,
    )  # fmt: skip
    if p.returncode != 0:
        raise SystemExit(f"evalscope failed ({p.returncode}):\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    (out,) = [d for d in work.iterdir() if d.is_dir()]
    return out


def evalscope_results(
    out: Path, dataset: str
) -> tuple[dict[str, str], dict[str, float], set[str], dict[str, str | None]]:
    """(sample id -> answer, metric -> score, metrics evalscope could not compute, sample id -> the text of
    the user message it sent, None when not plain text) of one dataset. A sample's id is its `id` column
    when evalscope kept one in the sample's metadata (general_mcq does), else its row number, as edgefarm's."""
    (review,) = out.glob(f"reviews/*/{dataset}_*.jsonl")
    answers, failed, prompts = {}, set(), {}
    for line in review.read_text().splitlines():
        r = json.loads(line)
        score = r["sample_score"]["score"]
        meta = r["sample_score"].get("sample_metadata") or {}
        sid = str(meta["id"]) if meta.get("id") not in (None, NO_ID) else str(r["index"])
        answers[sid] = score["prediction"]
        user = [m.get("content") for m in r.get("messages") or [] if m.get("role") == "user"]
        prompts[sid] = user[-1] if user and isinstance(user[-1], str) else None
        failed |= set((score.get("metadata") or {}).get("metric_errors") or {})
    (report,) = out.glob(f"reports/*/{dataset}.json")
    scores = {metric_key(m["identity"]): m["score"] for m in json.loads(report.read_text())["metrics"]}
    # metric_errors name a metric family (BLEU): every score of it is out of the comparison
    failed_keys = {k for k in scores if k.split("-")[0].upper() in {f.upper() for f in failed}}
    return answers, scores, failed_keys, prompts


def lab_phones(tmp: Path, on: bool):
    """The adb device lab's Pixel 8 and Galaxy S24 (tests/lab/adb: real adb servers, edgefarm's native runner
    on the real runtime) and the environment that reaches them, or this host's environment alone."""
    if not on:
        return contextlib.nullcontext((dict(os.environ), ""))
    from tests.lab.adb.conftest import running_lab
    from tests.lab.adb.sandbox import GALAXY_S24, PIXEL_8

    @contextlib.contextmanager
    def lab():
        with running_lab(tmp / "lab", [("pixel8", PIXEL_8, 0), ("s24", GALAXY_S24, 0)], hosts=1) as it:
            env = {k: v for k, v in it.env().items() if k != "EDGEFARM_INVENTORY"}
            yield env, ",".join(PHONES)

    return lab()


def run_edgefarm(
    devices: str, inventory: str | None, path: Path, fmt: str, max_tokens: int, out: Path, env: dict
) -> Path:
    inv = ["--inventory", inventory] if inventory else []
    p = subprocess.run(
        [sys.executable, "-m", "orchestrator", "run", "--devices", devices, *inv, "--model", str(TINY_MM),
         "--dataset", str(path), "--format", fmt, "--max-output-tokens", str(max_tokens), "--out", str(out),
         "--db", "none"], cwd=REPO, env=env, capture_output=True, text=True, timeout=1800, check=False,
    )  # fmt: skip
    if p.returncode != 0:
        raise SystemExit(f"edgefarm run failed ({p.returncode}):\n{p.stderr[-3000:]}")
    (run_dir,) = [d for d in out.iterdir() if d.is_dir()]
    return run_dir


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", default="this-host")
    ap.add_argument("--inventory", default=None)
    ap.add_argument("--venv", type=Path, default=cache_dir() / EVALSCOPE.replace("==", "-"))
    ap.add_argument("--max-tokens", type=int, default=8, choices=range(1, 4097), metavar="1..4096")
    ap.add_argument(
        "--lab-phones",
        action="store_true",
        help="also the adb device lab's Pixel 8 and Galaxy S24 (tests/lab/adb), served beside --devices",
    )
    ap.add_argument("--json", action="store_true", help="print the comparison as JSON")
    a = ap.parse_args()
    exe = evalscope_venv(a.venv)
    findings, ok = [], True
    with (
        tempfile.TemporaryDirectory(prefix="edgefarm-evalscope-") as tmp_s,
        lab_phones(Path(tmp_s), a.lab_phones) as (env, phones),
    ):
        tmp = Path(tmp_s)
        devices = ",".join(d for d in (phones, a.devices) if d)
        vqa, vmcq = write_examples(tmp / "files")
        files = {
            "general_vqa": vqa,
            "general_vmcq": vmcq,
            "general_mcq": write_mcq_examples(tmp / "files" / "mcq"),
        }
        flags = ("--inventory", a.inventory) if a.inventory else ()
        server = Server(tmp, *flags, env=env, devices=devices, within_s=180)
        try:
            models = [m.id for m in server.client.models.list().data]
            outs = {m: run_evalscope(exe, server.url, m, tmp / "files", tmp / "es" / m.replace("/", "_"), a.max_tokens)
                    for m in models}  # fmt: skip
        finally:
            server.stop()
        for dataset, (fmt, _, _) in DATASETS.items():
            run_dir = run_edgefarm(
                devices, a.inventory, files[dataset], fmt, a.max_tokens, tmp / f"run-{fmt}", env
            )
            report = json.loads((run_dir / "report.json").read_text())
            rendered = {s.id: s.turns[0].text for s in load_dataset(files[dataset], format=fmt).samples}
            for model, out in outs.items():
                device = model.split("/")[0]
                answers, scores, failed, sent = evalscope_results(out, dataset)
                rows = {r["id"]: r for r in map(json.loads, (run_dir / "devices" / device / "results.jsonl").read_text().splitlines())}  # fmt: skip
                metrics = next(d for d in report["devices"] if d["device"] == device)["metrics"]
                same = {i: i in rows and rows[i]["output"] == ans for i, ans in answers.items()}
                differ = {k: (v, metrics.get(k)) for k, v in scores.items()
                          if k not in failed and (metrics.get(k) is None or abs(v - metrics[k]) > 1e-9)}  # fmt: skip
                prompts_differ = sorted(
                    i for i, text in sent.items() if text is not None and text != rendered.get(i)
                )
                ok &= all(same.values()) and not differ and len(same) == len(rows) and not prompts_differ
                findings.append({"model": model, "dataset": dataset, "samples": len(answers),
                                 "answers_equal": sum(same.values()), "scores": scores,
                                 "text_prompts_compared": sum(t is not None for t in sent.values()),
                                 "prompts_differ": prompts_differ,
                                 "scores_differ": differ, "evalscope_could_not_compute": sorted(failed),
                                 "answers": {i: [answers[i], rows.get(i, {}).get("output")] for i in answers}})  # fmt: skip
    if a.json:
        print(json.dumps({"ok": ok, "findings": findings}, indent=1))
    else:
        for f in findings:
            print(f"{f['model']} {f['dataset']}: {f['answers_equal']}/{f['samples']} answers equal to edgefarm run's; "
                  f"{f['text_prompts_compared']} text prompts compared, {len(f['prompts_differ'])} differ; "
                  f"{len(f['scores']) - len(f['evalscope_could_not_compute'])} scores compared, "
                  f"{len(f['scores_differ'])} differ {f['scores_differ'] or ''}; evalscope could not compute: "
                  f"{', '.join(f['evalscope_could_not_compute']) or 'none'}")  # fmt: skip
        print("OK: evalscope through edgefarm serve agrees with edgefarm run" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
