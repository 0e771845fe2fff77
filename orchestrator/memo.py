"""What edgefarm worked out from files, kept between runs while those files are unchanged.

Every run needs the model's sha256 (seconds for a 3 GB model), its inspection (the runtime, its
file tooling and ai-edge-litert imported: 0.19 s on this host) and a dataset and devices.yaml checked
against their schemas (95 ms, jsonschema's import alone 46 ms), and gets the same answer each time the
files and the code are the same. A memo entry records what it depends on, the files' stat signatures
(fsutil.stat_key: device, inode, size, mtime) and, where it matters, the code's, and holds only while
every one is unchanged; what is keyed by content (a sha256) depends on no file. Checks keep only
outcomes without problems: a problem is reported by the full check, every time. Entries are pickles
in `$EDGEFARM_CACHE_DIR/memo/<kind>/` (default ~/.cache/edgefarm), a folder as trusted as the runner
edgefarm starts from `$EDGEFARM_CACHE_DIR/local`; a damaged or unreadable entry is a miss.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .errors import OutputError
from .fsutil import cache_dir, stat_key, write_bytes_atomic

Signature = tuple[tuple[str, tuple[int, ...] | None], ...]


def signature(paths: Iterable[Path]) -> Signature:
    """Each path with its stat (None when it is missing); folders too (their mtime moves when an entry
    is added or removed)."""
    out = []
    for p in paths:
        try:
            st = os.stat(p)
            out.append((str(p), stat_key(st)))
        except OSError:
            out.append((str(p), None))
    return tuple(out)


def code_signature(*patterns: str) -> Signature:
    """edgefarm's own files that decide an outcome (globs under orchestrator/, e.g. "datasets/*.py"):
    editing one, or installing another version, makes every entry that depends on it a miss."""
    root = Path(__file__).resolve().parent
    return signature(sorted(p for pattern in patterns for p in root.glob(pattern)))


def _plain(key: Any) -> Any:
    """The key as JSON gives it back (tuples become lists), so a stored key compares equal."""
    return json.loads(json.dumps(key, default=str))


class Memo:
    """One kind of kept outcome: `get(key)` gives the value stored by `put(key, depends_on, value)`
    while the files it depends on are unchanged."""

    MAX_ENTRIES = 64  # per kind: a farm uses a few models and datasets; tests make many throwaway ones

    def __init__(self, kind: str, folder: Path | None = None) -> None:
        self.folder = folder or cache_dir() / "memo" / kind

    def _file(self, key: Any) -> Path:
        digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()
        return self.folder / f"{digest}.pickle"

    def get(self, key: Any) -> Any | None:
        try:
            with open(self._file(key), "rb") as f:
                stored_key, depends_on, value = pickle.load(f)  # our own cache folder (see above)
        except Exception:  # noqa: BLE001 - any damage is a miss
            return None
        if stored_key != _plain(key):
            return None
        paths = [Path(p) for p, _ in depends_on]
        return value if signature(paths) == depends_on else None

    def put(self, key: Any, depends_on: Iterable[Path], value: Any) -> None:
        """Keep `value` while `depends_on` stays unchanged; the oldest entries beyond MAX_ENTRIES go."""
        data = (_plain(key), signature(depends_on), value)
        try:
            write_bytes_atomic(self._file(key), pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))
            entries = sorted(self.folder.glob("*.pickle"), key=lambda f: f.stat().st_mtime_ns)
            for old in entries[: max(0, len(entries) - self.MAX_ENTRIES)]:
                old.unlink(missing_ok=True)
        except (OutputError, OSError):  # not kept: computed again next time
            pass
