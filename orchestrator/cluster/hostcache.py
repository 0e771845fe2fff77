"""A farm host's cache of big files (models, media), keyed by sha256.

A file arrives in chunks into `incoming/<sha>.<agent pid>.part` (two runs on one host may fetch it
at once); each chunk is checked against the sha256 the controller announced before it is written,
the whole file again before it is renamed into place, so the cache never holds a file whose name is
not its content's hash when it arrives. A file can change on disk afterwards (a flipped bit, a tool
that wrote into it): `verify` hashes it whole, streamed, and the agent does so before the first use
of each file in a run (docs/cluster.md gives the cost); a copy that does not hash to its name is
removed with its named links (`discard`) and fetched again."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from .types import Blob, TransferRefused

CACHE_IN_CACHE_DIR = "cluster"  # $EDGEFARM_CACHE_DIR/cluster, else ~/.cache/edgefarm/cluster


class HostCache:
    def __init__(self, root: Path, host: str) -> None:
        self.root = root
        self.host = host

    def path(self, sha256: str) -> Path:
        return self.root / "blobs" / sha256[:2] / sha256

    def holds(self, blob: Blob) -> bool:
        """The file is in place with the announced size (its content: `verify`)."""
        try:
            return self.path(blob.sha256).stat().st_size == blob.size
        except FileNotFoundError:
            return False

    def verify(self, blob: Blob) -> bool:
        """The cached file's whole content hashes to its name (streamed, 1 MiB at a time)."""
        digest = hashlib.sha256()
        try:
            with open(self.path(blob.sha256), "rb") as f:
                while data := f.read(1 << 20):
                    digest.update(data)
        except FileNotFoundError:
            return False
        return digest.hexdigest() == blob.sha256

    def discard(self, blob: Blob) -> None:
        """Remove a cached file and its named links (a damaged copy: it is fetched again)."""
        self.path(blob.sha256).unlink(missing_ok=True)
        named = self.root / "named" / blob.sha256
        for link in named.glob("*") if named.is_dir() else ():
            link.unlink(missing_ok=True)

    def _part(self, blob: Blob) -> Path:
        return self.root / "incoming" / f"{blob.sha256}.{os.getpid()}.part"

    def begin(self, blob: Blob) -> None:
        """Make room for the whole file; chunks may then arrive in any order."""
        part = self._part(blob)
        part.parent.mkdir(parents=True, exist_ok=True)
        for stale in part.parent.glob(f"{blob.sha256}.*.part"):  # left by an agent that died mid-file
            if stale != part and not _alive(int(stale.name.split(".")[1])):
                stale.unlink(missing_ok=True)
        with open(part, "wb") as f:
            f.truncate(blob.size)

    def write_chunk(self, blob: Blob, index: int, data: bytes) -> int:
        """Check chunk `index` against its announced sha256, then write it at its offset."""
        if not 0 <= index < blob.chunks:
            raise TransferRefused(
                f"chunk {index} of {blob.name} is outside its {blob.chunks} chunks",
                where=f"farm host {self.host}",
                fix="a bug in the controller: report it with the run folder",
            )
        if hashlib.sha256(data).hexdigest() != blob.chunk_sha256[index]:
            raise TransferRefused(
                f"chunk {index} of {blob.name} ({blob.sha256[:12]}) arrived with a different sha256; refused",
                where=f"farm host {self.host}",
                fix="rerun: the chunk is sent again; if it repeats, check the farm host's memory and disk",
            )
        fd = os.open(self._part(blob), os.O_WRONLY)
        try:
            os.pwrite(fd, data, index * blob.chunk_bytes)
        finally:
            os.close(fd)
        return len(data)

    def commit(self, blob: Blob) -> Path:
        """Check the whole file's sha256 and rename it into place (atomic)."""
        part = self._part(blob)
        digest = hashlib.sha256()
        with open(part, "rb") as f:
            while data := f.read(1 << 20):
                digest.update(data)
        if digest.hexdigest() != blob.sha256:
            part.unlink(missing_ok=True)
            raise TransferRefused(
                f"{blob.name} assembled to a different sha256 than {blob.sha256[:12]}; removed",
                where=f"farm host {self.host}",
                fix="rerun: the file is sent again",
            )
        dst = self.path(blob.sha256)
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.replace(part, dst)
        return dst

    def named(self, blob: Blob, name: str) -> Path:
        """The cached file under its original name (a hard link beside the blob): runtimes and the
        job's media names go by the suffix."""
        dst = self.root / "named" / blob.sha256 / name
        src = self.path(blob.sha256)
        if dst.exists() and not os.path.samefile(dst, src):  # a link to a copy replaced since
            dst.unlink(missing_ok=True)
        if not dst.exists():
            dst.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(src, dst)
            except FileExistsError:
                pass
        return dst


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        pass
    return True
