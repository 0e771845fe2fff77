"""Build the tiny bundled LiteRT-LM models (data/models/tiny-mm.litertlm, tiny-text.litertlm).

A pipeline model, not a useful one: random weights except that it memorizes a few canned pairs
(data/models/canned.json) so tests can assert exact greedy answers. Offline, ~1-2 minutes on 2 cores.

    python3 -m venv /tmp/modelbuild
    /tmp/modelbuild/bin/pip install torch==2.13.0          # first: the local CPU wheel
    /tmp/modelbuild/bin/pip install -r scripts/requirements-model-build.txt
    /tmp/modelbuild/bin/python scripts/build_tiny_model.py  # writes data/models/
    /tmp/modelbuild/bin/python scripts/build_tiny_model.py --dynamic-context --cache-length 8192 \
        --out /tmp/depth-model                              # tiny-text-dynamic.litertlm (docs/bench.md)

Never run in CI; commit the outputs. Files are not byte-reproducible (the packer stamps time).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tiny_model.canned import CANNED

SEED = 20240611


# name -> multimodal (encoders, external embedder)
STATIC_VARIANTS = {"tiny-mm": True, "tiny-text": False}
DYNAMIC_VARIANTS = {"tiny-text-dynamic": False}


def build(
    out_dir: Path, work: Path, *, steps: int, cache_length: int, prefill: list[int], dynamic_context: bool
) -> None:
    import torch
    from tiny_model import encoders, lm, pack

    torch.set_num_threads(2)
    venv_bin = Path(sys.executable).parent
    hf_dir = work / "hf"
    hf_dir.mkdir(parents=True)

    t0 = time.monotonic()
    tok = lm.train_tokenizer(hf_dir)
    enc = encoders.make_encoders(lm.HIDDEN, SEED + 1)
    torch.manual_seed(SEED)
    model = lm.LlamaForCausalLM(
        lm.make_config(tok, max_positions=cache_length, dynamic_context=dynamic_context)
    )
    loss = lm.train(model, tok, enc, steps=steps, seed=SEED)
    answers = lm.greedy_check(model, tok)
    print(f"trained {steps} steps in {time.monotonic() - t0:.1f}s, loss {loss:.4f}", file=sys.stderr)
    wrong = [(c.prompt, c.answer, a) for c, a in zip(CANNED, answers) if a != c.answer]
    if wrong:
        raise SystemExit(f"training did not memorize the canned pairs: {wrong}; raise --steps")
    model.save_pretrained(hf_dir)

    staging = work / "out"  # copied to out_dir only after the runtime check passes
    staging.mkdir()
    variants = DYNAMIC_VARIANTS if dynamic_context else STATIC_VARIANTS
    for name, multimodal in variants.items():
        exported = pack.export_lm(
            hf_dir,
            work / f"export-{name}",
            prefill=prefill,
            cache_length=cache_length,
            external_embedder=multimodal,
            dynamic_context=dynamic_context,
        )
        sections = pack.unpack(exported, work / f"unpacked-{name}", venv_bin)
        if multimodal:
            enc_dir = work / "encoders"
            enc_dir.mkdir()
            sections.update(encoders.convert_all(enc, lm.HIDDEN, enc_dir))
        metadata = pack.llm_metadata(multimodal=multimodal, max_num_tokens=cache_length)
        pack.pack(sections, metadata, work, staging / f"{name}.litertlm", venv_bin, name=name)

    rows = [c.to_json() for c in CANNED]
    from tiny_model.measure import verify

    wrong = [
        w for name, mm in variants.items() for w in verify(staging / f"{name}.litertlm", rows, multimodal=mm)
    ]
    if not dynamic_context:  # the bundled pair's answers; the dynamic variant answers the text ones
        (staging / "canned.json").write_text(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
    if wrong:
        raise SystemExit("packed model misses canned answers: " + "; ".join(wrong))
    out_dir.mkdir(parents=True, exist_ok=True)
    for path in sorted(staging.iterdir()):
        shutil.copyfile(path, out_dir / path.name)
    print(f"built {', '.join(variants)} in {time.monotonic() - t0:.1f}s", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=REPO / "data" / "models")
    ap.add_argument("--steps", type=int, default=300, help="AdamW steps memorizing the canned pairs")
    ap.add_argument("--cache-length", type=int, default=2048, help="KV cache = context limit in tokens")
    ap.add_argument("--prefill", default="128", help="comma-separated prefill signature lengths")
    ap.add_argument(
        "--dynamic-context",
        action="store_true",
        help="build tiny-text-dynamic instead: KV cache sized to the filled context (CPU only), "
        "--cache-length is then its largest context",
    )
    ap.add_argument("--keep-work", type=Path, help="build here and keep intermediates (debugging)")
    ap.add_argument("--measure", action="store_true", help="only time the built models (needs litert-lm-api)")
    args = ap.parse_args(argv)
    if args.measure:
        from tiny_model.measure import measure

        for key, value in measure(args.out).items():
            print(f"{key}: {value:.2f}")
        return
    prefill = [int(x) for x in args.prefill.split(",")]
    options = {"steps": args.steps, "cache_length": args.cache_length, "prefill": prefill,
               "dynamic_context": args.dynamic_context}  # fmt: skip
    if args.keep_work:
        shutil.rmtree(args.keep_work, ignore_errors=True)
        args.keep_work.mkdir(parents=True)
        build(args.out, args.keep_work, **options)
        return
    with tempfile.TemporaryDirectory(prefix="tiny-model-") as tmp:
        build(args.out, Path(tmp), **options)


if __name__ == "__main__":
    main()
