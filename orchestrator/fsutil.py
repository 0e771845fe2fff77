"""Writing output files: atomic (a reader never sees half a report), following the umask, and every
OSError turned into an OutputError naming the path and the fix (never a traceback)."""

from __future__ import annotations

import errno
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .errors import OutputError


def _read_umask() -> int:
    """The process umask, read without changing it where /proc says it (Linux >= 4.7).

    Elsewhere os.umask must set it to read it; that happens once here, at import, under a lock, before
    any writer thread exists.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


_UMASK_LOCK = threading.Lock()
UMASK = _read_umask()
FILE_MODE = 0o666 & ~UMASK  # what open(path, "w") would give; mkstemp alone gives 0600

_WHY = {
    errno.ENOSPC: ("no space left on the disk", "free space on that disk"),
    errno.EDQUOT: ("disk quota exceeded", "free space within your quota"),
    errno.EROFS: ("the file system is read-only", "remount it writable"),
    errno.EACCES: ("permission denied", "make the folder writable for this user"),
    errno.EPERM: ("operation not permitted", "make the folder writable for this user"),
    errno.ENOTDIR: ("a part of the path is a file, not a folder", "remove the file that stands in the path"),
    errno.EEXIST: ("a file is in the way where a folder should be", "remove that file"),
    errno.ENAMETOOLONG: ("the path is too long", "choose a shorter path"),
}


def output_error(e: OSError, path: Path, doing: str = "write") -> OutputError:
    """An OSError while writing `path` -> OutputError naming the path, the cause and the fix."""
    what, fix = _WHY.get(e.errno or 0, (e.strerror or str(e), "check the path and its disk"))
    return OutputError(f"cannot {doing}: {what}", where=str(path), fix=f"{fix}, or choose another --out")


@contextmanager
def output_errors(path: Path, doing: str = "write") -> Iterator[None]:
    """Turn any OSError raised inside the block into an OutputError about `path`."""
    try:
        yield
    except OSError as e:
        raise output_error(e, path, doing) from e


def make_dir(path: Path) -> Path:
    """mkdir -p, as OutputError when impossible."""
    with output_errors(path, "create the folder"):
        path.mkdir(parents=True, exist_ok=True)
    return path


def make_new_dir(path: Path) -> bool:
    """Create `path` itself (its parents as needed); False when it already exists (a name collision)."""
    make_dir(path.parent)
    try:
        path.mkdir()
    except FileExistsError:
        return False
    except OSError as e:
        raise output_error(e, path, "create the folder") from e
    return True


def write_text_atomic(path: Path, text: str) -> None:
    """Write text to a temp file in the same folder, then rename over `path`; mode follows the umask."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """write_text_atomic for bytes."""
    path = Path(path)
    make_dir(path.parent)
    with output_errors(path):
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                os.fchmod(f.fileno(), FILE_MODE)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def write_json_atomic(path: Path, data: Any) -> None:
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False) + "\n")


def stat_key(st: os.stat_result) -> tuple[int, int, int, int]:
    """What says a file is unchanged without reading it: device, inode, size and mtime in ns.

    Not ctime: hard-linking a file changes its ctime, and edgefarm links every dataset medium into
    each run's job folder (and this host's model into its work folder), so ctime would make every
    run look at changed files (as git's `core.trustctime = false`). A file rewritten in place with its
    size and its mtime to the nanosecond put back is the one change this misses."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def cache_dir() -> Path:
    """edgefarm's caches on this host: `$EDGEFARM_CACHE_DIR`, else ~/.cache/edgefarm."""
    return Path(os.environ.get("EDGEFARM_CACHE_DIR") or "~/.cache/edgefarm").expanduser()


def link_new(src: Path, dst: Path) -> bool:
    """Hard-link `src` at `dst` when dst does not exist yet and both are on one file system; False
    otherwise. A link is atomic: whoever creates dst first wins, the other gets False."""
    if dst.exists():
        return False
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:  # made by someone else first, another file system, or links not allowed here
        return False
    return True


def place_file(src: Path, dst: Path) -> None:
    """Hard-link `src` at `dst` when possible (same file system), else copy it; an existing dst stays."""
    if link_new(src, dst) or dst.exists():
        return
    with output_errors(dst):
        try:
            shutil.copyfile(src, dst)
        except BaseException:
            dst.unlink(missing_ok=True)
            raise
