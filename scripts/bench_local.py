#!/usr/bin/env python3
"""Host overhead per sample of `edgefarm run` on this host, over the full bundled dataset.

    python scripts/bench_local.py [--model M] [--dataset D] [--repeat 3] [--max-output-tokens 32]

overhead/sample = (wall time of the whole command - the runtime's own inference time) / samples,
where inference time is the sum of each sample's `infer_ms` (time inside the runtime's send calls).
Also reports the session-only figure (the device's wall time without CLI start-up, dataset loading,
scoring and report writing) and, as the yardstick, a bare in-process loop over the same prompts
(engine loaded once, fresh conversation per sample, plain send_message).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def one_run(model: Path, dataset: str, max_tokens: int, work: Path) -> dict:
    out = work / "runs"
    inv = work / "devices.yaml"
    inv.write_text(
        json.dumps({"devices": [{"name": "this-host", "kind": "local", "workdir": str(work / "dev")}]})
    )
    t0 = time.perf_counter()
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "orchestrator",
            "run",
            "--devices",
            "local",
            "--inventory",
            str(inv),
            "--model",
            str(model),
            "--dataset",
            dataset,
            "--out",
            str(out),
            "--max-output-tokens",
            str(max_tokens),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    wall_s = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"edgefarm run failed ({p.returncode}):\n{p.stderr[-3000:]}")
    run_dir = next(out.iterdir())
    dev = run_dir / "devices" / "this-host"
    results = [json.loads(x) for x in (dev / "results.jsonl").read_text().splitlines() if x.strip()]
    session_s = json.loads((dev / "outcome.json").read_text())["wall_s"]
    infer_s = sum(r.get("infer_ms") or 0 for r in results) / 1000.0
    n = len(results)
    return {
        "samples": n,
        "wall_s": wall_s,
        "session_s": session_s,
        "infer_s": infer_s,
        "overhead_ms_per_sample": (wall_s - infer_s) / n * 1000.0,
        "session_overhead_ms_per_sample": (session_s - infer_s) / n * 1000.0,
        "statuses": {s: sum(r["status"] == s for r in results) for s in {r["status"] for r in results}},
    }


def bare_loop(model: Path, dataset: str, max_tokens: int, work: Path) -> dict:
    """The yardstick: the same samples through litert_lm directly, nothing else."""
    import litert_lm

    from orchestrator.datasets import load_dataset
    from orchestrator.jobs import JobOptions, job_items

    ds = load_dataset(dataset)
    items = job_items(ds.samples, JobOptions(max_output_tokens=max_tokens, override=True))
    with litert_lm.ModelInfo(str(model)) as info:
        vision, audio = info.input_modalities.vision, info.input_modalities.audio
    (work / "cache").mkdir(exist_ok=True)
    engine = litert_lm.Engine(
        str(model),
        cache_dir=str(work / "cache"),
        enable_benchmark=True,
        vision_backend=litert_lm.Backend.CPU() if vision else None,
        audio_backend=litert_lm.Backend.CPU() if audio else None,
    )
    by_id = {s.id: s for s in ds.samples}
    t0 = time.perf_counter()
    for item in items:
        conv = engine.create_conversation(
            sampler_config=litert_lm.SamplerConfig(top_k=1), max_output_tokens=max_tokens
        )
        for turn in by_id[item.id].turns:
            parts = [
                litert_lm.Content.Text(p.text)
                if p.kind == "text"
                else (
                    litert_lm.Content.ImageFile(str(p.path))
                    if p.kind == "image"
                    else litert_lm.Content.AudioFile(str(p.path))
                )
                for p in turn.parts
                if p.kind != "text" or p.text
            ]
            conv.send_message(litert_lm.Contents.of(*parts))
        conv.close()
    total = time.perf_counter() - t0
    return {"samples": len(items), "total_s": total, "ms_per_sample": total / len(items) * 1000.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=REPO / "data/models/tiny-mm.litertlm")
    ap.add_argument("--dataset", default=str(REPO / "data/edgemmeval"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-output-tokens", type=int, default=32)
    args = ap.parse_args()
    runs = []
    for i in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(one_run(args.model, args.dataset, args.max_output_tokens, Path(tmp)))
        r = runs[-1]
        print(
            f"run {i + 1}: {r['samples']} samples, wall {r['wall_s']:.2f} s, session {r['session_s']:.2f} s, "
            f"inference {r['infer_s']:.2f} s, overhead {r['overhead_ms_per_sample']:.2f} ms/sample "
            f"(session only {r['session_overhead_ms_per_sample']:.2f}), statuses {r['statuses']}"
        )
    with tempfile.TemporaryDirectory() as tmp:
        bare = bare_loop(args.model, args.dataset, args.max_output_tokens, Path(tmp))
    med = statistics.median(r["overhead_ms_per_sample"] for r in runs)
    med_session = statistics.median(r["session_overhead_ms_per_sample"] for r in runs)
    print(f"median host overhead: {med:.2f} ms/sample end to end, {med_session:.2f} ms/sample in the session")
    print(
        f"yardstick bare loop: {bare['ms_per_sample']:.2f} ms/sample all-in ({bare['total_s']:.2f} s for {bare['samples']})"
    )


if __name__ == "__main__":
    main()
