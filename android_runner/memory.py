"""Samples a process's memory from /proc/<pid>/status while a sample runs.

LiteRT-LM maps weights from the model file, so file-backed (RssFile) and anonymous (RssAnon)
memory are kept apart; VmSwap matters where zram holds part of the heap. Stdlib only.

Per-sample peak (android_runner/contract.py, `peak_method`): `reset()` before each sample writes
"5" to /proc/<pid>/clear_refs, which resets the kernel's VmHWM to the current RSS (Linux >= 4.0,
Documentation/filesystems/proc.rst "clear_refs"), so VmHWM read at the end covers this sample
alone and catches a spike between two samples ("hwm_reset"). Where the kernel refuses it, only the
sampled maximum is per sample ("sampled"), and VmHWM (the process's whole life) is not reported.

The sampler thread wakes every few ms and holds the GIL while it reads, so each reading is kept
cheap: the status file stays open and is re-read from offset 0 (procfs regenerates it), as bytes,
and only our few fields are looked up in it.

`paused()`: no readings while the runtime times a bench turn (android_runner/bench.py). Even so cheap
a thread cost a 1-thread engine up to 2% of its prefill speed on a 2-core host (scripts/bench_vs_litert.py,
docs/benchmarks/bench.md); the item's resident peak is the reset VmHWM, which needs no reading. A
started thread, even paused, still cost an engine at the runtime's default thread count 6% of its
prefill and 12% of its decode speed, so the bench runner never starts one (readings at the turns'
edges only; `interval_ms` is then None).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

FIELDS_KB = ("VmRSS", "VmHWM", "RssAnon", "RssFile", "VmSwap")
_NEEDLES = tuple((f"\n{key}:".encode(), key) for key in FIELDS_KB)
_MAX_KB = 1 << 40  # some kernels print overflowed garbage: ignore it
_READ_BYTES = 1 << 16  # far more than a status file holds


RSS_PLUS_SWAP = "VmRSS+VmSwap"  # a derived key of the sampler's peaks


def reset_hwm(pid: int | str = "self") -> bool:
    """Reset the process's VmHWM to its current RSS (write "5" to clear_refs); False where refused."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w", encoding="ascii") as f:
            f.write("5")
        return True
    except OSError:
        return False


def sample_peaks_mb(peaks: dict[str, float], method: str) -> dict[str, float | None]:
    """A sample's memory figures (SampleResult field -> MB) by the one definition of contract.py."""

    def mb(key: str) -> float | None:
        v = peaks.get(key)
        return round(v, 2) if v is not None else None

    hwm = mb("VmHWM") if method == "hwm_reset" else None
    sampled = mb(RSS_PLUS_SWAP) or mb("VmRSS")
    candidates = [v for v in (hwm, sampled) if v is not None]
    return {
        "peak_rss_mb": max(candidates) if candidates else None,
        "peak_hwm_mb": hwm,
        "peak_anon_mb": mb("RssAnon"),
        "peak_file_mb": mb("RssFile"),
        "peak_swap_mb": mb("VmSwap"),
    }


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
        self._pid = pid
        self._path = f"/proc/{pid}/status"
        self.peak_method = ""  # of the sample since the last reset(): "hwm_reset" | "sampled"
        self._interval_s = interval_s
        self._lock = threading.Lock()
        self._peaks: dict[str, float] = {}
        self._file = None  # opened on first read, kept for the process (closing could race a reader)
        self._stop = threading.Event()
        self._reading = threading.Event()  # cleared while paused: the thread sleeps on it
        self._reading.set()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="memory-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Never raises."""
        self._stop.set()
        self._reading.set()  # a paused thread wakes to see the stop
        if self._thread is not None:
            self._thread.join(timeout=1.0)

    @property
    def interval_ms(self) -> float | None:
        """Between background readings; None when no thread reads (never started: readings are taken
        only at reset(), paused() and peaks())."""
        return round(self._interval_s * 1000.0, 3) if self._thread is not None else None

    def reset(self) -> None:
        """Start a sample: forget the peaks and reset the kernel's high-water mark."""
        self.peak_method = "hwm_reset" if reset_hwm(self._pid) else "sampled"
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
        if "VmRSS" in now:  # RSS alone misses what zram holds: the peak is of resident + swapped
            now[RSS_PLUS_SWAP] = now["VmRSS"] + now.get("VmSwap", 0.0)
        with self._lock:
            peaks = self._peaks
            for k, v in now.items():
                if v > peaks.get(k, -1.0):
                    peaks[k] = v

    def peaks(self) -> dict[str, float]:
        self.sample()
        with self._lock:
            return dict(self._peaks)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """No background reading inside the block (one reading as it starts and as it ends); the
        thread sleeps until then, not waking every interval. Not nested."""
        self.sample()
        self._reading.clear()
        try:
            yield
        finally:
            self._reading.set()
            self.sample()

    def _loop(self) -> None:
        while self._reading.wait() and not self._stop.wait(self._interval_s):
            if self._reading.is_set():
                self.sample()
