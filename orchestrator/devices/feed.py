"""A running command's stdin, written while it runs: how `edgefarm serve` hands the Python runner (this
host, boards) each request the moment it has it (runners/serve_link.py). The device kind's `run`
attaches its writer for the command's life (a pipe here, the SSH channel's stdin on a board) and detaches
it when the command ends; a line sent while nothing is attached is the caller's DeviceError."""

from __future__ import annotations

import threading
from collections.abc import Callable

from ..errors import DeviceError


class Feed:
    """Text for one running command's stdin; thread-safe (a request and a cancel never interleave)."""

    def __init__(self, where: str) -> None:
        self.where = where
        self._lock = threading.Lock()
        self._write: Callable[[str], None] | None = None

    def attach(self, write: Callable[[str], None]) -> None:
        """The command started: `write` puts text on its stdin (called under the feed's lock)."""
        with self._lock:
            self._write = write

    def detach(self) -> None:
        with self._lock:
            self._write = None

    def send(self, text: str) -> None:
        with self._lock:
            if self._write is None:
                raise DeviceError("the runner is not running (nothing reads its stdin)", where=self.where,
                                  fix="the runner is started again by itself; send the request again")  # fmt: skip
            try:
                self._write(text)
            except (OSError, ValueError, RuntimeError) as e:  # a closed pipe or channel: the runner is gone
                raise DeviceError(f"the runner's stdin is closed ({type(e).__name__}: {e})", where=self.where,
                                  fix="the runner is started again by itself; send the request again") from e  # fmt: skip
