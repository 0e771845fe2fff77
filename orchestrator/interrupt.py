"""Ctrl-C during a run: the first one stops the farm cleanly, a second one leaves at once.

First SIGINT (or SIGTERM): the stop event is set; every device session stops its runner on the
device, keeps every finished sample, and the run writes its reports for what finished, prints how
to resume, and exits INTERRUPTED_EXIT. Second: exit at once with the same code; nothing finished is
lost (each device's results file and the run's stream files are already on disk), so `--resume`
still continues it.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

INTERRUPTED_EXIT = 130  # 128 + SIGINT, what a shell reports for a Ctrl-C'd command


class Interrupted(Exception):
    """Ctrl-C arrived while a device's work was being staged (its job written, its files pushed): the
    stage stops at its next step (a job line, a pushed block of at most 1 MiB) and nothing more runs."""


def raise_if_set(stop: threading.Event | None) -> None:
    if stop is not None and stop.is_set():
        raise Interrupted()


@contextmanager
def interrupts_raise() -> Iterator[None]:
    """Before the run's handlers are installed (reading the inputs, listing devices, joining a cluster):
    SIGTERM raises KeyboardInterrupt as SIGINT does, so either ends those phases at the next Python
    step; the caller exits INTERRUPTED_EXIT. Nothing is written before the run folder exists."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame) -> None:
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@contextmanager
def stop_on_interrupt(say=lambda message: print(message, file=sys.stderr)) -> Iterator[threading.Event]:
    """Install the handlers (main thread only) for the duration of the block; yields the stop event."""
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handler(signum, frame) -> None:
        if stop.is_set():
            os._exit(INTERRUPTED_EXIT)
        stop.set()
        say(
            "interrupted: stopping every device's runner and keeping what finished (Ctrl-C again to quit at once)"
        )

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
