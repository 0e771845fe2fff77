#!/usr/bin/env python3
"""Build the bundled EdgeMMEval-format dataset: data/edgemmeval/data/test/{metadata.jsonl,images/,audio/}.

Rows are Python literals in scripts/dataset_builder/rows_*.py; images are drawn with PIL and audio is
synthesised with espeak-ng + sox, all deterministic, so a rebuild rewrites byte-identical files
(for the same Pillow / espeak-ng / sox versions). `--check` rebuilds into a temporary folder and
reports any file that differs from the committed one.

    python scripts/build_dataset.py            # (re)write data/edgemmeval
    python scripts/build_dataset.py --check    # exit 1 if the committed files are stale
"""

from __future__ import annotations

import argparse
import filecmp
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dataset_builder import audio, images
from dataset_builder.rowkit import check_rows
from dataset_builder.rows_audio import AUDIO_ROWS
from dataset_builder.rows_combination import COMBINATION_ROWS
from dataset_builder.rows_image import IMAGE_ROWS
from dataset_builder.rows_multi_turn import MULTI_TURN_ROWS
from dataset_builder.rows_structured import STRUCTURED_ROWS
from dataset_builder.rows_text import TEXT_ROWS
from dataset_builder.rows_tools import TOOL_ROWS

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "data" / "edgemmeval"
SPLIT = Path("data") / "test"
COMPOSITION = {
    "image": 34,
    "audio": 27,
    "text": 41,
    "multi_turn": 24,
    "combination": 28,
    "structured_output": 32,
    "tool_call": 14,
}


def all_rows() -> list[dict]:
    return [
        *IMAGE_ROWS,
        *AUDIO_ROWS,
        *TEXT_ROWS,
        *MULTI_TURN_ROWS,
        *COMBINATION_ROWS,
        *STRUCTURED_ROWS,
        *TOOL_ROWS,
    ]


def problems(rows: list[dict]) -> list[str]:
    """Contract checks plus: exact composition, and media referenced == media the builder makes."""
    found = check_rows(rows)
    counts = {m: sum(r["modality"] == m for r in rows) for m in COMPOSITION}
    if counts != COMPOSITION:
        found.append(f"composition {counts} != {COMPOSITION}")
    used = {p for r in rows for p in r.get("images", []) + r.get("audio", [])}
    made = {f"images/{n}" for n in images.IMAGES} | {f"audio/{n}" for n in audio.CLIPS}
    found += [f"{p}: referenced but no recipe" for p in sorted(used - made)]
    found += [f"{p}: made but never referenced" for p in sorted(made - used)]
    return found


def build(root: Path) -> dict[str, int]:
    """Write metadata.jsonl, images/ and audio/ under root/data/test; returns file counts."""
    rows = all_rows()
    issues = problems(rows)
    if issues:
        raise SystemExit("dataset rows are invalid:\n  " + "\n  ".join(issues))
    split = root / SPLIT
    for sub in ("images", "audio"):
        shutil.rmtree(split / sub, ignore_errors=True)
    split.mkdir(parents=True, exist_ok=True)
    n_img = len(images.write_all(split / "images"))
    n_aud = len(audio.write_all(split / "audio"))
    with open(split / "metadata.jsonl", "w", encoding="utf-8", newline="\n") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    return {"rows": len(rows), "images": n_img, "audio": n_aud}


def stale_files(root: Path) -> list[str]:
    """Files under root/data/test that a fresh build would write differently (or not at all)."""
    with tempfile.TemporaryDirectory(prefix="edgemm-check-") as t:
        build(Path(t))
        fresh, old = Path(t) / SPLIT, root / SPLIT
        names = {p.relative_to(fresh) for p in fresh.rglob("*") if p.is_file()}
        names |= {p.relative_to(old) for p in old.rglob("*") if p.is_file()} if old.exists() else set()
        return sorted(
            str(n)
            for n in names
            if not (
                (fresh / n).is_file()
                and (old / n).is_file()
                and filecmp.cmp(fresh / n, old / n, shallow=False)
            )
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="dataset root (default: data/edgemmeval)")
    ap.add_argument("--check", action="store_true", help="only report files a rebuild would change")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    if args.check:
        stale = stale_files(args.out)
        for name in stale:
            print(f"stale: {name}", file=sys.stderr)
        print(f"{len(stale)} stale file(s) in {args.out} ({time.monotonic() - t0:.1f} s)")
        return 1 if stale else 0
    counts = build(args.out)
    size_mb = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file()) / 1e6
    print(
        f"wrote {counts['rows']} rows, {counts['images']} images, {counts['audio']} audio clips to "
        f"{args.out} ({size_mb:.2f} MB total) in {time.monotonic() - t0:.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
