"""Describe a file as chunks with their sha256 (one read), and read one chunk back."""

from __future__ import annotations

import hashlib
from pathlib import Path

from .types import CHUNK_BYTES, Blob


def describe(path: Path, chunk_bytes: int = CHUNK_BYTES) -> Blob:
    """The file's sha256 and one sha256 per `chunk_bytes` chunk, in one pass."""
    whole = hashlib.sha256()
    chunks: list[str] = []
    size = 0
    with open(path, "rb") as f:
        while data := f.read(chunk_bytes):
            whole.update(data)
            chunks.append(hashlib.sha256(data).hexdigest())
            size += len(data)
    return Blob(path.name, whole.hexdigest(), size, chunk_bytes, tuple(chunks))


def read_chunk(path: Path, blob: Blob, index: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(index * blob.chunk_bytes)
        return f.read(blob.chunk_bytes)
