"""File helpers every device kind shares: content hashes and the file list of a push."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path, PurePosixPath

from ..errors import DeviceError
from ..fsutil import cache_dir, stat_key, write_cache_json

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
    files of 1 MiB or more (models) once across runs (`HashStore`: hashing a 3 GB model takes
    seconds, and every run needs its sha256 for run.json and the devices' checks).

    Within a process a file is known by its inode, so the hard links of one medium in every device's
    job folder are hashed once, not once per device (16 phones: 16 x 107 files); phones staging at
    the same time wait for the one thread that hashes a file instead of all hashing it."""
    st = os.stat(path)
    key = stat_key(st)
    with _computing[hash(key) % len(_computing)]:
        with _lock:
            if key in _cache:
                return _cache[key]
        store = HashStore.default() if st.st_size >= PERSIST_MIN_BYTES else None
        resolved = str(Path(path).resolve())
        digest = store.get(resolved, st) if store else None
        if digest is None:
            digest = sha256_file(path)
            if store:
                store.put(resolved, st, digest)
        with _lock:
            _cache[key] = digest
    return digest


class HashStore:
    """sha256 of big host files across runs, in `~/.cache/edgefarm/sha256.json`.

    An entry holds while the file's path and `stat_key` (device, inode, size, mtime) are unchanged, as
    git's index trusts a file's stat. The store is a cache: unreadable or damaged, it is empty; a failed write loses nothing.
    """

    MAX_ENTRIES = 4096
    _default: HashStore | None = None

    def __init__(self, path: Path) -> None:
        self.path = path
        self._entries: dict[str, str] | None = None

    @classmethod
    def default(cls) -> HashStore:
        with _lock:
            if cls._default is None:
                cls._default = cls(cache_dir() / "sha256.json")
            return cls._default

    @staticmethod
    def _key(resolved: str, st: os.stat_result) -> str:
        return "|".join(map(str, (resolved, *stat_key(st))))

    def _load(self) -> dict[str, str]:
        if self._entries is None:
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
                ok = isinstance(data, dict) and all(isinstance(v, str) for v in data.values())
                self._entries = data if ok else {}
            except (OSError, ValueError):
                self._entries = {}
        return self._entries

    def get(self, resolved: str, st: os.stat_result) -> str | None:
        with _lock:
            return self._load().get(self._key(resolved, st))

    def put(self, resolved: str, st: os.stat_result, digest: str) -> None:
        with _lock:
            entries = self._load()
            entries[self._key(resolved, st)] = digest
            while len(entries) > self.MAX_ENTRIES:
                entries.pop(next(iter(entries)))
            write_cache_json(self.path, entries)


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
