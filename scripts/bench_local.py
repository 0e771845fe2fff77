#!/usr/bin/env python3
"""`edgefarm run --devices local` against its yardsticks, whole process, paired runs, same job.

    python scripts/bench_local.py [--pairs 5] [--max-output-tokens 32] [--litert-lm PATH] [--json]

1. The bundled dataset (200 samples, text/image/audio, tiny model): `edgefarm run --devices local` as
   a user types it, against a bare `litert_lm` loop replaying the same job (engine loaded once, a fresh
   conversation per sample with the job's system message, tools and output cap, every turn's message
   JSON as the runner sends it, plain send_message), both as whole processes (interpreter start,
   imports, engine load, all samples, exit). Pairs alternate which goes first; the ratio is per pair
   (edgefarm / bare), reported as the best pair, the median and the spread. edgefarm runs without a
   devices.yaml, with this host's work folder and edgefarm's caches kept between runs (as a user's
   runs after their first; `litert-lm serve` below likewise serves a model imported once): one
   untimed first run fills them, and its wall time (model staged, runtime caches written) is printed
   on its own.
2. 200 short text prompts (the dataset's text rows, cycled; <= 32 output tokens): the same
   `edgefarm run` against `litert-lm serve` (from the `litert-lm` CLI package, in its own venv:
   `python -m venv V && V/bin/pip install litert-lm==0.18.1`, then `--litert-lm V/bin/litert-lm`):
   server start until it answers, then the 200 prompts over HTTP one after another, then stop.
Also per edgefarm run: the session's wall (device only) and the runtime's own inference time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

BARE_LOOP = """
import json, sys
import litert_lm
model, jobs = sys.argv[1], json.load(open(sys.argv[2]))
cpu = litert_lm.Backend.CPU
media = {p["type"] for j in jobs for m in j["messages"] for p in m["content"]}
engine = litert_lm.Engine(model, cache_dir=":nocache", enable_benchmark=True,
                          vision_backend=cpu() if "image" in media else None,
                          audio_backend=cpu() if "audio" in media else None)
def tool(spec):
    class T(litert_lm.Tool):
        def get_tool_description(self): return spec
        def execute(self, param): return {}
    return T()
for j in jobs:
    conv = engine.create_conversation(system_message=j["system"], tools=[tool(t) for t in j["tools"]] or None,
                                      automatic_tool_calling=False, sampler_config=litert_lm.SamplerConfig(top_k=1),
                                      max_output_tokens=j["max_output_tokens"])
    for m in j["messages"]:
        conv.send_message(m)
    conv.close()
"""


def jobs_of(dataset: str, max_tokens: int, work: Path) -> list[dict]:
    """The job edgefarm sends, as the conversations the runner builds (system message, tools, every turn's
    message JSON with absolute media paths, output cap): what the bare loop replays."""
    from android_runner.conversation import render, unsupported_reason
    from orchestrator.datasets import load_dataset
    from orchestrator.jobs import JobOptions, write_bundle

    items = write_bundle(
        load_dataset(dataset).samples, work, JobOptions(max_output_tokens=max_tokens, override=True)
    )
    out = []
    for item in items:
        if unsupported_reason(item, vision=True, audio=True):
            continue
        conv = render(item, str(work.resolve()))
        out.append({"system": conv.system_message, "tools": json.loads(conv.tools_json or "[]"),
                    "messages": [json.loads(m) for m in conv.messages], "max_output_tokens": max_tokens})  # fmt: skip
    return out


def text_dataset(folder: Path, count: int = 200) -> Path:
    """The bundled dataset's text rows, cycled to `count` rows with their own ids (EdgeMMEval layout)."""
    rows = [json.loads(x) for x in (REPO / "data/edgemmeval/data/test/metadata.jsonl").read_text().splitlines()
            if x.strip()]  # fmt: skip
    text = [r for r in rows if r.get("modality") == "text"]
    out = folder / "data" / "test"
    out.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(dict(text[i % len(text)], test_id=f"{text[i % len(text)]['test_id']}-{i + 1:03d}"))
             for i in range(count)]  # fmt: skip
    (out / "metadata.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def edgefarm_run(model: Path, dataset: str, max_tokens: int, out: Path, cache: Path) -> dict:
    """One `edgefarm run --devices local` as a user types it, whole process: no devices.yaml, this host's
    work folder and edgefarm's caches where they stay between runs (here `cache`, via EDGEFARM_CACHE_DIR)."""
    argv = [sys.executable, "-m", "orchestrator", "run", "--devices", "local", "--model", str(model), "--dataset",
            dataset, "--out", str(out), "--max-output-tokens", str(max_tokens)]  # fmt: skip
    env = dict(os.environ, CI="1", EDGEFARM_CACHE_DIR=str(cache))
    t0 = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, env=env, check=False)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"edgefarm run failed ({p.returncode}):\n{p.stderr[-3000:]}")
    dev = next(out.iterdir()) / "devices" / "this-host"
    rows = [json.loads(x) for x in (dev / "results.jsonl").read_text().splitlines() if x.strip()]
    return {
        "wall_s": wall,
        "session_s": json.loads((dev / "outcome.json").read_text())["wall_s"],
        "infer_s": sum(r.get("infer_ms") or 0 for r in rows) / 1000.0,
        "samples": len(rows),
        "ok": sum(r["status"] == "ok" for r in rows),
    }


def bare_run(model: Path, prompts_file: Path) -> dict:
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", BARE_LOOP, str(model), str(prompts_file)], check=True, capture_output=True
    )
    return {"wall_s": time.perf_counter() - t0}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_run(cli: Path, home: Path, prompts: list[str], max_tokens: int) -> dict:
    """`litert-lm serve`: start it, wait until it answers, send every prompt over HTTP, stop it."""
    port = free_port()
    env = dict(os.environ, HOME=str(home))
    t0 = time.perf_counter()
    server = subprocess.Popen([str(cli), "serve", "--port", str(port)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        base = f"http://127.0.0.1:{port}/v1"
        while True:
            try:
                urllib.request.urlopen(base + "/models", timeout=1).read()
                break
            except OSError:
                if server.poll() is not None:
                    sys.exit("litert-lm serve exited before answering")
                time.sleep(0.02)
        ready = time.perf_counter() - t0
        for text in prompts:
            body = {"model": "tiny", "messages": [{"role": "user", "content": text}],
                    "max_completion_tokens": max_tokens}  # fmt: skip
            req = urllib.request.Request(base + "/chat/completions", data=json.dumps(body).encode(),
                                         headers={"content-type": "application/json"})  # fmt: skip
            json.loads(urllib.request.urlopen(req, timeout=60).read())
        wall = time.perf_counter() - t0
    finally:
        server.terminate()
        server.wait(timeout=10)
    return {"wall_s": wall, "ready_s": ready}


def summary(ratios: list[float]) -> dict:
    return {"best": round(min(ratios), 3), "median": round(statistics.median(ratios), 3),
            "spread": round(max(ratios) - min(ratios), 3)}  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=REPO / "data/models/tiny-mm.litertlm")
    ap.add_argument("--dataset", default=str(REPO / "data/edgemmeval"))
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--max-output-tokens", type=int, default=32)
    ap.add_argument("--litert-lm", type=Path, default=shutil.which("litert-lm"),
                    help="the `litert-lm` CLI (package litert-lm) for the serve comparison")  # fmt: skip
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    result: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        prompts_file = work / "jobs.json"
        prompts_file.write_text(json.dumps(jobs_of(args.dataset, args.max_output_tokens, work / "bundle")))
        cache = work / "cache"  # this host's work folder and edgefarm's caches, kept from run to run
        first = edgefarm_run(args.model, args.dataset, args.max_output_tokens, work / "ef-first", cache)
        print(f"first run (fresh work folder and caches, not paired): edgefarm {first['wall_s']:.2f} s",
              file=sys.stderr, flush=True)  # fmt: skip
        pairs = []
        for i in range(args.pairs):
            runs = {}
            for who in ("edgefarm", "bare") if i % 2 == 0 else ("bare", "edgefarm"):
                runs[who] = (edgefarm_run(args.model, args.dataset, args.max_output_tokens, work / f"ef{i}", cache)
                             if who == "edgefarm" else bare_run(args.model, prompts_file))  # fmt: skip
            runs["ratio"] = runs["edgefarm"]["wall_s"] / runs["bare"]["wall_s"]
            pairs.append(runs)
            print(f"pair {i + 1}: edgefarm {runs['edgefarm']['wall_s']:.2f} s (session {runs['edgefarm']['session_s']:.2f}, "
                  f"inference {runs['edgefarm']['infer_s']:.2f}, ok {runs['edgefarm']['ok']}/{runs['edgefarm']['samples']}), "
                  f"bare loop {runs['bare']['wall_s']:.2f} s: {runs['ratio']:.2f}x", file=sys.stderr, flush=True)  # fmt: skip
        result["bundled"] = {"first_run": first, "pairs": pairs, "ratio": summary([p["ratio"] for p in pairs])}
        if args.litert_lm:
            home = work / "serve-home"
            home.mkdir()
            subprocess.run([str(args.litert_lm), "import", str(args.model), "tiny"], env=dict(os.environ, HOME=str(home)),
                           check=True, capture_output=True)  # fmt: skip
            texts = text_dataset(work / "texts")
            jobs = jobs_of(str(texts), args.max_output_tokens, work / "tb")
            prompts = [
                " ".join(p["text"] for p in j["messages"][0]["content"] if p["type"] == "text") for j in jobs
            ]
            edgefarm_run(args.model, str(texts), args.max_output_tokens, work / "tx-first", cache)  # untimed: its files staged
            spairs = []
            for i in range(args.pairs):
                runs = {}
                for who in ("edgefarm", "serve") if i % 2 == 0 else ("serve", "edgefarm"):
                    runs[who] = (edgefarm_run(args.model, str(texts), args.max_output_tokens, work / f"tx{i}", cache)
                                 if who == "edgefarm" else serve_run(args.litert_lm, home, prompts, args.max_output_tokens))  # fmt: skip
                runs["ratio"] = runs["edgefarm"]["wall_s"] / runs["serve"]["wall_s"]
                spairs.append(runs)
                print(f"text pair {i + 1}: edgefarm {runs['edgefarm']['wall_s']:.2f} s, litert-lm serve "
                      f"{runs['serve']['wall_s']:.2f} s (ready after {runs['serve']['ready_s']:.2f} s): "
                      f"{runs['ratio']:.2f}x", file=sys.stderr, flush=True)  # fmt: skip
            result["text_vs_serve"] = {"prompts": len(prompts), "pairs": spairs,
                                       "ratio": summary([p["ratio"] for p in spairs])}  # fmt: skip
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    b = result["bundled"]
    ef = [p["edgefarm"]["wall_s"] for p in b["pairs"]]
    bare = [p["bare"]["wall_s"] for p in b["pairs"]]
    print(f"first run in a fresh work folder (model staged, runtime caches written; not paired): "
          f"{b['first_run']['wall_s']:.2f} s")
    print(f"bundled dataset, {b['pairs'][0]['edgefarm']['samples']} samples, {len(ef)} pairs: edgefarm best "
          f"{min(ef):.2f} s (spread {max(ef) - min(ef):.2f}), bare loop best {min(bare):.2f} s (spread "
          f"{max(bare) - min(bare):.2f}); edgefarm / bare per pair: best {b['ratio']['best']:.2f}x, median "
          f"{b['ratio']['median']:.2f}x, spread {b['ratio']['spread']:.2f}")  # fmt: skip
    if t := result.get("text_vs_serve"):
        ef = [p["edgefarm"]["wall_s"] for p in t["pairs"]]
        sv = [p["serve"]["wall_s"] for p in t["pairs"]]
        print(f"{t['prompts']} short text prompts: edgefarm best {min(ef):.2f} s (spread {max(ef) - min(ef):.2f}), "
              f"litert-lm serve best {min(sv):.2f} s (spread {max(sv) - min(sv):.2f}); edgefarm / serve per pair: "
              f"best {t['ratio']['best']:.2f}x, median {t['ratio']['median']:.2f}x")  # fmt: skip
    else:
        print("litert-lm serve: not compared (no `litert-lm` CLI; see --litert-lm)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
