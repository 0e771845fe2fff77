"""File helpers every device kind shares: content hashes and the file list of a push."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path, PurePosixPath

from ..errors import DeviceError

_cache: dict[tuple[str, int, int], str] = {}
_lock = threading.Lock()


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def cached_sha256(path: Path) -> str:
    """sha256 of a host file, computed once per process while its size and mtime stay the same
    (a multi-GB model is hashed once per run, not once per device and once more for run.json)."""
    st = path.stat()
    key = (str(Path(path).resolve()), st.st_size, st.st_mtime_ns)
    with _lock:
        if key in _cache:
            return _cache[key]
    digest = sha256_file(path)
    with _lock:
        _cache[key] = digest
    return digest


def push_pairs(local: Path, remote: PurePosixPath, where: str) -> list[tuple[Path, PurePosixPath]]:
    """(host file, device path) for a file, or for every file of a folder tree in a stable order."""
    local, remote = Path(local), PurePosixPath(remote)
    if local.is_dir():
        return [
            (p, remote / p.relative_to(local).as_posix()) for p in sorted(local.rglob("*")) if p.is_file()
        ]
    if local.is_file():
        return [(local, remote)]
    raise DeviceError(f"nothing to push at {local}", where=where, fix="check the local path")


def parse_sha256sum(out: str) -> dict[str, str]:
    """`sha256sum` output -> {path: digest}; unreadable or missing files simply do not appear."""
    found: dict[str, str] = {}
    for line in out.splitlines():
        digest, _, name = line.partition("  ")
        if len(digest) == 64 and name:
            found[name] = digest
    return found
