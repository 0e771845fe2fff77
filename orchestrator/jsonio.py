"""Bounded JSON from outside edgefarm: datasets, results files, run folders.

Every JSON text that edgefarm did not just produce itself is read through here, with a size bound
and a nesting bound. `json.loads` recurses once per nesting level, so a row nested 5000 deep ends
in RecursionError; the depth is checked first by a scan that does not recurse
(`android_runner.contract.loads_bounded`, shared with the runner side).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from android_runner.contract import JsonBoundError, check_json_bounds, loads_bounded

from .errors import EdgefarmError

__all__ = ["DATASET_ROW", "DOCUMENT", "Bounds", "JsonBoundError", "bound_problem", "describe",
           "loads", "loads_text", "read_json"]  # fmt: skip

MiB = 2**20


@dataclass(frozen=True)
class Bounds:
    max_bytes: int
    max_depth: int


# One dataset row: a 10 MB prompt still loads (the plan refuses it with a reason, see plan.py);
# nesting beyond 64 levels is nothing a dataset row, a JSON schema or a tool list needs.
DATASET_ROW = Bounds(max_bytes=64 * MiB, max_depth=64)
# A whole document: run.json, a device's report.json, a results.json given to `edgefarm score`.
DOCUMENT = Bounds(max_bytes=512 * MiB, max_depth=64)


def _line_col(text: str | bytes, offset: int) -> tuple[int, int]:
    nl = "\n" if isinstance(text, str) else b"\n"
    line = text.count(nl, 0, offset) + 1
    col = offset - (text.rfind(nl, 0, offset) + 1) + 1
    return line, col


def describe(e: JsonBoundError, text: str | bytes) -> tuple[str, int]:
    """(message, 1-based line within text) for a bound that tripped."""
    if e.kind == "size":
        return f"larger than {e.limit / MiB:g} MiB; edgefarm refuses JSON this large", 1
    line, col = _line_col(text, e.offset)
    return f"nested deeper than {e.limit} levels (column {col}); edgefarm refuses JSON this deep", line


def bound_problem(text: str | bytes, bounds: Bounds) -> tuple[str, int] | None:
    """(message, line) when text is over a bound, else None; parses nothing."""
    try:
        check_json_bounds(text, bounds.max_bytes, bounds.max_depth)
    except JsonBoundError as e:
        return describe(e, text)
    return None


def loads(text: str | bytes, bounds: Bounds, **kwargs: Any) -> Any:
    """`json.loads` within bounds: JsonBoundError (a ValueError) over a bound, JSONDecodeError on bad JSON."""
    return loads_bounded(text, bounds.max_bytes, bounds.max_depth, **kwargs)


def read_json(
    path: Path,
    bounds: Bounds,
    *,
    error: type[EdgefarmError],
    fix: str,
    **kwargs: Any,
) -> Any:
    """A whole JSON file within bounds; any problem (unreadable, too big, too deep, not JSON) is `error`
    naming file:line and carrying `fix`."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > bounds.max_bytes:
            raise error(
                f"the file is {size / MiB:.1f} MiB, larger than the {bounds.max_bytes / MiB:g} MiB "
                "edgefarm reads",
                where=str(path),
                fix=fix,
            )
        text = path.read_text(encoding="utf-8-sig")
    except OSError as e:
        raise error(f"cannot read the file: {e.strerror or e}", where=str(path), fix=fix) from None
    except UnicodeDecodeError as e:
        raise error(f"not UTF-8 text ({e.reason} at byte {e.start})", where=str(path), fix=fix) from None
    return loads_text(text, str(path), bounds, error=error, fix=fix, **kwargs)


def loads_text(
    text: str, where: str, bounds: Bounds, *, error: type[EdgefarmError], fix: str, **kwargs: Any
) -> Any:
    """Parse JSON text that came from `where` (a file name); problems are `error` naming where:line."""
    try:
        return loads(text, bounds, **kwargs)
    except JsonBoundError as e:
        what, line = describe(e, text)
        raise error(what, where=f"{where}:{line}", fix=fix) from None
    except json.JSONDecodeError as e:
        raise error(
            f"not valid JSON: {e.msg} (column {e.colno})", where=f"{where}:{e.lineno}", fix=fix
        ) from None
