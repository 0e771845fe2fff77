"""The drill-down's prompts and media: the run's dataset read again (a local folder only, never a
download), each sample's text put on its row, and its images/audio copied into the run folder's
`media/` under the hash of their bytes.

Dataset file names are data: a copy is named `media/<sha256 prefix><known extension>`, so no name
from the dataset reaches a path, and nothing is written outside the run folder. Files larger than
MAX_MEDIA_BYTES, or of another kind, are not shown. Writes go through fsutil (a full disk is
exit 5, as for every file of the run)."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

from ..datasets.types import Dataset
from ..errors import EdgefarmError
from ..fsutil import make_dir, write_bytes_atomic
from .types.run_report import RunReport
from .types.sample_row import SampleRow

MAX_MEDIA_BYTES = 20 * 2**20
EXTENSIONS = frozenset(
    {".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".wav", ".mp3", ".flac", ".ogg", ".m4a"}
)
MEDIA_DIR = "media"


def _copy(src: Path, run_dir: Path, write: bool) -> str | None:
    """`media/<hash><ext>` for a dataset file (copied when `write`), None when it cannot be shown."""
    ext = src.suffix.lower()
    try:
        if ext not in EXTENSIONS or not src.is_file() or src.stat().st_size > MAX_MEDIA_BYTES:
            return None
        data = src.read_bytes()
    except OSError:
        return None
    name = f"{hashlib.sha256(data).hexdigest()[:20]}{ext}"
    dest = run_dir / MEDIA_DIR / name
    if dest.is_file():
        return f"{MEDIA_DIR}/{name}"
    if not write:
        return None
    make_dir(dest.parent)
    write_bytes_atomic(dest, data)  # fsutil: a full disk is OutputError (exit 5), as for every run file
    return f"{MEDIA_DIR}/{name}"


def _dataset_of(report: RunReport) -> Dataset | None:
    """The run's dataset read again from run.json's path; None when it is gone or no longer loads."""
    recorded = report.run.get("dataset") if isinstance(report.run.get("dataset"), dict) else {}
    spec = str(recorded.get("path") or "")
    if not spec or not Path(spec).expanduser().exists():
        return None
    from ..datasets import load_dataset  # lazy: only when a report with a drill-down is written

    flags = report.run.get("flags") if isinstance(report.run.get("flags"), dict) else {}
    try:
        return load_dataset(
            Path(spec).expanduser(), format=recorded.get("format") or None, subset=flags.get("subset")
        )
    except (EdgefarmError, OSError):  # a dataset that no longer loads leaves the drill-down without prompts
        return None


def with_samples(
    report: RunReport, run_dir: Path, write: bool = True, dataset: Dataset | None = None
) -> RunReport:
    """The report with each sample's prompt and media on its row. `dataset`: the run's, when the caller
    has it (`edgefarm run`); else it is read again from run.json's path, and the report is left as it
    is when that is not a local path any more (moved, or a hub id: the report never downloads)."""
    ds = dataset if dataset is not None else _dataset_of(report)
    if ds is None or not report.samples:
        return report
    by_id = {s.id: s for s in ds.samples}
    rows: list[SampleRow] = []
    for row in report.samples:
        sample = by_id.get(row.id)
        if sample is None:
            rows.append(row)
            continue
        prompt = "\n\n".join(t.text for t in sample.turns if t.text)
        media = [m for p in sample.media if p.path is not None and (m := _copy(Path(p.path), run_dir, write))]
        rows.append(replace(row, prompt=prompt, media=tuple(media)))
    return replace(report, samples=tuple(rows))
