"""Host work that can wait, done at the lowest CPU priority while the devices run.

When this host is the device, the runtime keeps both cores of a small machine busy (the tiny model's
runner: a main thread plus XNNPACK and execution threads, 1.4 cores on average on 2), so any host CPU
during the samples is taken from the model being measured. Work that only prepares later stages,
importing the scorer and the report's modules and scoring each answer as it arrives, therefore runs
in ONE thread at nice 19: it gets the CPU the devices leave idle and still finishes before the last
sample. On Linux every thread is a task with its own nice value; only this thread is lowered, never
one that starts a runner (a child inherits its parent thread's nice value).
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

LOWEST = 19
T = TypeVar("T")


def lower_this_thread() -> None:
    """Give the calling thread the lowest CPU priority (where the OS allows it; else nothing)."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), LOWEST)
    except (AttributeError, OSError):
        pass


class IdleWorker:
    """One low-priority daemon thread running queued callables in order. A callable that raises is
    dropped: what is done here is only a head start, the stage that needs its result does it again."""

    def __init__(self, name: str = "idle") -> None:
        self._queue: queue.SimpleQueue[Callable[[], object]] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def submit(self, fn: Callable[[], object]) -> None:
        self._queue.put(fn)

    def _loop(self) -> None:
        lower_this_thread()
        while True:
            fn = self._queue.get()
            try:
                fn()
            except Exception:  # noqa: BLE001, S112 - a head start only; its stage reports the error
                continue


_shared: IdleWorker | None = None
_shared_lock = threading.Lock()


def idle_worker() -> IdleWorker:
    """The process's one idle worker (started on first use)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = IdleWorker()
        return _shared


class HeadStart(Generic[T]):
    """A value the idle worker computes while the devices run (`submit(head_start.get)`), or whoever
    asks for it first: a caller never waits on a starved nice-19 thread that has not begun it."""

    def __init__(self, compute: Callable[[], T]) -> None:
        self._compute = compute
        self._lock = threading.Lock()
        self._done = False
        self._value: T | None = None

    def get(self) -> T:
        with self._lock:
            if not self._done:
                self._value, self._done = self._compute(), True
            return self._value  # type: ignore[return-value]
