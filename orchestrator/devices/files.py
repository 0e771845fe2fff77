"""File helpers every device kind shares: content hashes and the file list of a push."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from ..errors import DeviceError, OutputError
from ..fsutil import cache_dir, stat_key, write_text_atomic

_cache: dict[tuple[int, ...], str] = {}
_lock = threading.Lock()
_computing = [threading.Lock() for _ in range(64)]  # one file's hash is computed by one thread at a time
PERSIST_MIN_BYTES = 1 << 20  # smaller files hash in well under a millisecond: not worth a line on disk


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def cached_sha256(path: Path) -> str:
    """sha256 of a host file, computed once while the file stays the same: once per process, and for
    files of 1 MiB or more (models) once across runs (hashing a 3 GB model takes seconds, and every
    run needs its sha256 for run.json and the devices' checks).

    The hash depends on the file's bytes: it is kept with the file's path and stat (fsutil.stat_key:
    device, inode, size, mtime) and holds while they are unchanged. Within a process a file is known
    by its inode, so the hard links of one medium in every device's job folder are hashed once, not
    once per device (16 phones: 16 x 107 files); phones staging at the same time wait for the one
    thread that hashes a file instead of all hashing it."""
    st = os.stat(path)
    key = stat_key(st)
    with _computing[hash(key) % len(_computing)]:
        with _lock:
            if key in _cache:
                return _cache[key]
        kept = _hash_file(path) if st.st_size >= PERSIST_MIN_BYTES else None
        digest = _read_kept(kept, key) if kept else None
        if digest is None:
            digest = sha256_file(path)
            if kept:
                _keep(kept, key, digest)
        with _lock:
            _cache[key] = digest
    return digest


def _hash_file(path: Path) -> Path:
    """Where a big file's hash is kept across runs: $EDGEFARM_CACHE_DIR/sha256/<sha256 of its path>.json."""
    name = hashlib.sha256(str(Path(path).resolve()).encode()).hexdigest()
    return cache_dir() / "sha256" / f"{name}.json"


def _read_kept(kept: Path, key: tuple[int, ...]) -> str | None:
    """The kept hash when it was taken of the file as it is now (same stat), else None."""
    try:
        entry = json.loads(kept.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # missing or damaged: a miss
        return None
    if not isinstance(entry, dict) or entry.get("stat") != list(key):
        return None
    digest = entry.get("sha256")
    return digest if isinstance(digest, str) and len(digest) == 64 else None


def _keep(kept: Path, key: tuple[int, ...], digest: str) -> None:
    try:
        write_text_atomic(kept, json.dumps({"stat": list(key), "sha256": digest}))
    except (OutputError, OSError):  # not kept: computed again next time
        pass


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


def runner_sha256(files: Mapping[str, bytes]) -> str:
    """What a board's runner probe (devices/ssh_info.py) prints for these files ({"./android_runner/x.py": content})."""
    lines = "".join(
        f"{hashlib.sha256(data).hexdigest()}  {path}\n"
        for path, data in sorted(files.items(), key=lambda x: x[0].encode())
    )
    return hashlib.sha256(lines.encode()).hexdigest()
