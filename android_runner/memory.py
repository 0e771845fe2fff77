"""Samples a process's memory from /proc/<pid>/status while a sample runs.

LiteRT-LM maps weights from the model file, so file-backed (RssFile) and anonymous (RssAnon)
memory are kept apart; VmSwap matters where zram holds part of the heap. Stdlib only.
"""

from __future__ import annotations

import threading

FIELDS_KB = ("VmRSS", "VmHWM", "RssAnon", "RssFile", "VmSwap")


def parse_status(text: str) -> dict[str, float]:
    """`/proc/<pid>/status` -> {field: MB} for the fields we use; anything odd is skipped."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key not in FIELDS_KB:
            continue
        parts = rest.split()
        if len(parts) >= 1 and parts[0].isdigit():
            kb = int(parts[0])
            if kb < 1 << 40:  # some kernels print overflowed garbage: ignore it
                out[key] = kb / 1024.0
    return out


class MemorySampler:
    """A background thread keeping the peaks of one process's memory fields since `reset()`."""

    def __init__(self, pid: int | str = "self", interval_s: float = 0.005) -> None:
        self._path = f"/proc/{pid}/status"
        self._interval_s = interval_s
        self._lock = threading.Lock()
        self._peaks: dict[str, float] = {}
        self._last: dict[str, float] = {}
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

    def sample(self) -> None:
        try:
            with open(self._path, encoding="ascii", errors="replace") as f:
                now = parse_status(f.read())
        except OSError:
            return
        with self._lock:
            self._last = now
            for k, v in now.items():
                if v > self._peaks.get(k, -1.0):
                    self._peaks[k] = v

    def peaks(self) -> dict[str, float]:
        self.sample()
        with self._lock:
            return dict(self._peaks)

    def _loop(self) -> None:
        while not self._stop.wait(self._interval_s):
            self.sample()
