"""Finding and reading evalscope custom dataset files (JSONL, CSV or TSV), shared by every evalscope format.

`--dataset` is a file, or a folder plus a subset: `<subset>_<split>.<ext>`, then `<subset>.<ext>`, for
ext in jsonl, csv, tsv; first found wins. A subset names a file inside the folder, never a path. A folder
without a subset loads every subset in it whose columns fit the format. Rows keep their 0-based number
(the sample id when the row has no `id` / `index`) and their `file:line` for messages.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DatasetError
from ..jsonio import DATASET_ROW, JsonBoundError, describe, loads
from .evalscope_media import MediaContext, RowProblem
from .types import Dataset, Problem, Sample

EXTENSIONS = (".jsonl", ".csv", ".tsv")
SUBSET_NAME = re.compile(r"^[\w][\w.+-]*$")  # a file name stem: no separator, no `..` prefix
KNOWN_SPLITS = ("train", "dev", "val", "validation", "test")


@dataclass(frozen=True)
class Row:
    data: Mapping[str, Any]
    index: int  # 0-based data row number in its file
    where: str  # "file:line"


def read_rows(path: Path) -> tuple[list[Row], list[Problem]]:
    """All rows of a JSONL or TSV file, plus a Problem per unreadable line."""
    rows: list[Row] = []
    problems: list[Problem] = []
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise DatasetError(
            f"cannot read {path}: {e}", fix="check the file exists and is UTF-8 text", where=str(path)
        )
    if path.suffix.lower() == ".csv":
        return _csv_rows(path, text)
    lines = text.splitlines()
    if path.suffix.lower() == ".tsv":
        header_at = next((i for i, line in enumerate(lines) if line.strip()), None)
        if header_at is None:
            return rows, problems
        header = [h.strip() for h in lines[header_at].split("\t")]
        for n, line in enumerate(lines[header_at + 1 :], start=header_at + 2):
            if not line.strip():
                continue
            cells = line.split("\t")
            where = f"{path}:{n}"
            if len(cells) > len(header) and any(c.strip() for c in cells[len(header) :]):
                problems.append(
                    Problem(where, f"{len(cells)} cells but only {len(header)} columns in the header")
                )
                continue
            data = {h: c for h, c in zip(header, cells) if h and c != ""}  # short rows: missing = empty
            rows.append(Row(data, len(rows), where))
        return rows, problems
    index = 0  # a broken line still takes its row number, so later ids do not shift
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where, index = f"{path}:{n}", index + 1
        try:
            data = loads(line, DATASET_ROW)
        except JsonBoundError as e:
            problems.append(Problem(where, f"{describe(e, line)[0]}; shorten or flatten this row"))
            continue
        except json.JSONDecodeError as e:
            problems.append(Problem(where, f"not valid JSON: {e.msg} (column {e.colno})"))
            continue
        if not isinstance(data, dict):
            problems.append(Problem(where, f"a row must be a JSON object, got {type(data).__name__}"))
            continue
        rows.append(Row(data, index - 1, where))
    return rows, problems


def _csv_rows(path: Path, text: str) -> tuple[list[Row], list[Problem]]:
    """A CSV file as Python's csv module reads it (evalscope's `csv.DictReader`): quoted cells may hold
    commas and newlines; every header column is in every row, an empty cell as ''. A row with more
    or fewer cells than the header is a Problem (evalscope would shift the cells or fill in None)."""
    rows: list[Row] = []
    problems: list[Problem] = []
    reader = csv.reader(io.StringIO(text))
    header: list[str] | None = None
    while True:
        start = reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            return rows, problems
        except csv.Error as e:  # a cell over csv's field size limit, a NUL byte: the reader cannot go on
            what = (
                f"not readable as CSV: {e}; the rest of the file is not read (a cell holds at most 128 KiB)"
            )
            problems.append(Problem(f"{path}:{start}", what))
            return rows, problems
        if not any(c.strip() for c in cells):
            continue
        if header is None:
            header = cells
            continue
        where = f"{path}:{start}"
        if len(cells) != len(header):
            problems.append(Problem(where, f"{len(cells)} cells but the header has {len(header)} columns; "
                                    'quote a cell that holds a comma ("299,792 km/s")'))  # fmt: skip
            continue
        rows.append(Row(dict(zip(header, cells)), len(rows), where))


def columns(path: Path) -> set[str]:
    """Column names of a file's first row (TSV header, or the first JSONL object's keys)."""
    try:
        with path.open(encoding="utf-8-sig") as f:
            for line in f:
                if not line.strip():
                    continue
                if path.suffix.lower() == ".tsv":
                    return {h.strip() for h in line.rstrip("\r\n").split("\t")}
                if path.suffix.lower() == ".csv":
                    return set(next(csv.reader([line])))
                data = loads(line, DATASET_ROW)
                return set(data) if isinstance(data, dict) else set()
    except (OSError, ValueError, csv.Error):  # unreadable, not UTF-8, not JSON, over a bound: no columns
        return set()
    return set()


def _subset_of(stem: str, split: str) -> str:
    return stem[: -len(split) - 1] if stem.endswith(f"_{split}") else stem


def find_files(
    path: Path, subset: str | None, split: str, fits: Callable[[set[str]], bool]
) -> list[tuple[str, Path]]:
    """(subset name, file) pairs to load for `--dataset path [--subset name]`."""
    if path.is_file():
        return [(subset or _subset_of(path.stem, split), path)]
    if not path.is_dir():
        raise DatasetError(
            f"no such file or folder: {path}",
            fix="give a .jsonl/.csv/.tsv file or its folder",
            where=str(path),
        )
    if subset:
        names = [n for ext in EXTENSIONS for n in (f"{subset}_{split}{ext}", f"{subset}{ext}")]
        if not SUBSET_NAME.match(subset):
            raise DatasetError(
                f"subset {subset!r} is not a plain file name (letters, digits, _ . + -; no '/', no leading "
                "'.'): it could name a file outside the folder",
                fix="give the subset as the file's name without split and extension (example for "
                "example_val.csv); point --dataset at a file elsewhere instead",
                where=str(path),
            )
        for name in names:  # evalscope's order: per extension, the split's file, then the plain one
            if (path / name).is_file():
                return [(subset, inside(path, path / name))]
        have = sorted({_subset_of(p.stem, split) for p in path.iterdir() if p.suffix in EXTENSIONS})
        raise DatasetError(
            f"no file for subset {subset!r} (looked for {', '.join(names)})",
            fix=f"use one of the subsets in the folder: {', '.join(have) or '(none)'}",
            where=str(path),
        )
    chosen: dict[str, Path] = {}
    others = tuple(f"_{s}" for s in KNOWN_SPLITS if s != split)
    candidates = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in EXTENSIONS)
    # evalscope's order: jsonl, csv, tsv, and within one the split's name first; the first file per subset wins
    candidates.sort(key=lambda p: (EXTENSIONS.index(p.suffix), not p.stem.endswith(f"_{split}"), p.name))
    for p in candidates:
        if p.name == "metadata.jsonl" or p.stem.endswith(others) or not fits(columns(p)):
            continue
        chosen.setdefault(_subset_of(p.stem, split), inside(path, p))
    if not chosen:
        raise DatasetError(
            f"no .jsonl/.csv/.tsv file in {path} has the columns of this format",
            fix="point --dataset at the file itself, or check its columns (see docs/evalscope.md)",
            where=str(path),
        )
    return sorted(chosen.items())


def inside(folder: Path, file: Path) -> Path:
    """`file`, which must stay inside `folder` once symlinks are followed (else a DatasetError)."""
    if not file.resolve().is_relative_to(folder.resolve()):
        raise DatasetError(
            f"{file.name} in {folder} is a link to {file.resolve()}, outside the dataset folder",
            fix="copy the file into the dataset folder, or point --dataset at it directly",
            where=str(file),
        )
    return file


def sample_id(row: Row) -> str:
    """The row's `id` or `index` field if present, else its 0-based row number."""
    for key in ("id", "index"):
        value = row.data.get(key)
        if value is not None and str(value).strip():
            return str(value).strip()
    return str(row.index)


RowFn = Callable[[Row, MediaContext, str], Sample]  # (row, ctx with ctx.test_id = sample id, subset)


def load_files(
    path: Path,
    fmt: str,
    files: list[tuple[str, Path]],
    row_fn: RowFn,
    *,
    cache_dir: Path,
    cwd: Path,
) -> Dataset:
    """Read every file, turn each row into a Sample or a Problem, and check ids are unique."""
    root = (path if path.is_dir() else path.parent).resolve()
    samples: list[Sample] = []
    problems: list[Problem] = []
    seen: dict[str, str] = {}
    for subset, file in files:
        rows, bad = read_rows(file)
        problems.extend(bad)
        for row in rows:
            # several subsets at once: ids are prefixed so results.json keys stay unique
            sid = f"{subset}/{sample_id(row)}" if len(files) > 1 else sample_id(row)
            if sid in seen:
                problems.append(
                    Problem(row.where, f"duplicate id {sid!r} (first at {seen[sid]})", test_id=sid)
                )
                continue
            seen[sid] = row.where
            ctx = MediaContext(root=root, cwd=cwd, cache_dir=cache_dir, where=row.where, test_id=sid)
            try:
                samples.append(row_fn(row, ctx, subset))
            except RowProblem as e:
                problems.append(e.problem)
    name = path.name if path.is_dir() else path.stem
    return Dataset(name=name, format=fmt, root=root, files=tuple(f for _, f in files),
                   samples=tuple(samples), problems=tuple(problems))  # fmt: skip


def default_cache_dir() -> Path:
    """Where decoded base64 media go when the caller gives no run cache (content-addressed, shared)."""
    import tempfile

    return Path(tempfile.gettempdir()) / "edgefarm-media-cache"


def cwd_now() -> Path:
    return Path(os.getcwd())


def detect_columns(path: Path, fits: Callable[[set[str]], bool]) -> bool:
    """A .jsonl/.tsv file whose columns fit the format, or a folder holding one (not EdgeMMEval's)."""
    if path.is_file():
        return path.suffix.lower() in EXTENSIONS and fits(columns(path))
    if path.is_dir() and not (path / "metadata.jsonl").exists():
        return any(p.suffix in EXTENSIONS and fits(columns(p)) for p in sorted(path.iterdir()) if p.is_file())
    return False


def load_format(
    path: Path,
    subset: str | None,
    fmt: str,
    fits: Callable[[set[str]], bool],
    row_to_sample: Callable[..., Any],
    *,
    split: str,
    cache_dir: Path | None,
    cwd: Path | None,
    check_file: Callable[[Path], None] | None = None,
) -> Dataset:
    """Find the format's files (file, or folder + subset), `check_file` each (it raises for a file the
    format cannot read at all), and load them; bad rows become Problems."""
    path = Path(path)
    files = find_files(path, subset, split, fits)
    for _, file in files if check_file else ():
        check_file(file)
    return load_files(
        path, fmt, files, row_to_sample, cache_dir=cache_dir or default_cache_dir(), cwd=cwd or cwd_now()
    )


def format_loader(
    fmt: str,
    fits: Callable[[set[str]], bool],
    row_to_sample: RowFn,
    default_split: str,
    check_file: Callable[[Path], None] | None = None,
) -> Callable[..., Dataset]:
    """A format's `load(path, subset=None, *, split=default_split, cache_dir=None, cwd=None)` (load_format's)."""

    def load(
        path: Path,
        subset: str | None = None,
        *,
        split: str = default_split,
        cache_dir: Path | None = None,
        cwd: Path | None = None,
    ) -> Dataset:
        return load_format(
            path,
            subset,
            fmt,
            fits,
            row_to_sample,
            split=split,
            cache_dir=cache_dir,
            cwd=cwd,
            check_file=check_file,
        )

    return load
