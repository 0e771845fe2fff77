"""Samples a process's memory from /proc/<pid>/status while a sample runs.

LiteRT-LM maps weights from the model file, so file-backed (RssFile) and anonymous (RssAnon)
memory are kept apart; VmSwap matters where zram holds part of the heap. Stdlib only.

The sampler thread wakes every few ms and holds the GIL while it reads, so each reading is kept
cheap: the status file stays open and is re-read from offset 0 (procfs regenerates it), as bytes,
and only our few fields are looked up in it.
"""

from __future__ import annotations

import os
import threading

FIELDS_KB = ("VmRSS", "VmHWM", "RssAnon", "RssFile", "VmSwap")
_NEEDLES = tuple((f"\n{key}:".encode(), key) for key in FIELDS_KB)
_MAX_KB = 1 << 40  # some kernels print overflowed garbage: ignore it
_READ_BYTES = 1 << 16  # far more than a status file holds


def parse_status(text: str | bytes) -> dict[str, float]:
    """`/proc/<pid>/status` -> {field: MB} for the fields we use; anything odd is skipped."""
    data = b"\n" + (text.encode("ascii", "replace") if isinstance(text, str) else text)
    out: dict[str, float] = {}
    for needle, key in _NEEDLES:
        at = data.rfind(needle)
        if at < 0:
            continue
        start = at + len(needle)
        end = data.find(b"\n", start)
        parts = data[start : end if end >= 0 else None].split()
        if parts and parts[0].isdigit():
            kb = int(parts[0])
            if kb < _MAX_KB:
                out[key] = kb / 1024.0
    return out


class MemorySampler:
    """A background thread keeping the peaks of one process's memory fields since `reset()`."""

    def __init__(self, pid: int | str = "self", interval_s: float = 0.005) -> None:
        self._path = f"/proc/{pid}/status"
        self._interval_s = interval_s
        self._lock = threading.Lock()
        self._peaks: dict[str, float] = {}
        self._file = None  # opened on first read, kept for the process (closing could race a reader)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="memory-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Never raises."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)

    def reset(self) -> None:
        with self._lock:
            self._peaks = {}
        self.sample()

    def _read(self) -> bytes:
        f = self._file
        if f is None:
            with self._lock:  # one open for both threads: a second file object's close could race a read
                if self._file is None:
                    self._file = open(self._path, "rb", buffering=0)  # noqa: SIM115 - kept open on purpose
                f = self._file
        return os.pread(f.fileno(), _READ_BYTES, 0)

    def sample(self) -> None:
        try:
            now = parse_status(self._read())
        except OSError:
            return
        with self._lock:
            peaks = self._peaks
            for k, v in now.items():
                if v > peaks.get(k, -1.0):
                    peaks[k] = v

    def peaks(self) -> dict[str, float]:
        self.sample()
        with self._lock:
            return dict(self._peaks)

    def _loop(self) -> None:
        while not self._stop.wait(self._interval_s):
            self.sample()
