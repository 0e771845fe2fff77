"""`edgefarm serve`'s requests to a runner that stays loaded (`litert_runner.py --serve`).

The host writes each request to the runner's stdin as one line, `REQUEST <job line>` (contract.JobItem,
its media pushed first to JOB/media/<id>/), and `CANCEL "<id>"` when the client went away. A thread reads
the lines as they come, so the runner starts a request the moment its line arrives: no folder to poll
(orchestrator/runners/serve_link.py says why). End of stdin is the host gone: the runner ends at once,
as `--exit-on-stdin-eof` does in a run.

The native runner on a phone cannot be written to (its driver starts it in the background): it takes
its requests from `JOB/requests/<n>.job` files instead (REQUESTS_DIR, android_runner/native/edgefarm_runner.c).
Stdlib only: this module is copied to boards.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from .contract import JobItem
from .memory import MemorySampler

REQUEST_WORD, CANCEL_WORD = "REQUEST", "CANCEL"
REQUEST_MAX_BYTES = 64 * 2**20  # one request line; the host's own bounds keep a request far below it
# the native runner's request folder (phones): JOB/requests/<n>.job, <id>.cancel
REQUESTS_DIR = "requests"
REQUEST_SUFFIX = ".job"
CANCEL_SUFFIX = ".cancel"


class Inbox:
    """The requests of one serving runner, read from `fd` (its stdin) by a thread of its own."""

    def __init__(self, job_dir: Path, on_eof: Callable[[], None], on_note: Callable[[str], None],
                 fd: int = 0) -> None:  # fmt: skip
        self.media = job_dir / "media"
        self.taken = 0
        self._on_eof, self._note, self._fd = on_eof, on_note, fd
        self._queue: queue.SimpleQueue[JobItem] = queue.SimpleQueue()
        self._cancelled: set[str] = set()
        threading.Thread(target=self._read, name="inbox", daemon=True).start()

    def items(self, memory: MemorySampler | None = None) -> Iterator[JobItem]:
        """Requests in the order they came, for the runner's life (its end is the host's: end of stdin).
        `memory`'s sampler thread sleeps while no request is there (a request's peaks are from its own
        reset on); an idle server otherwise woke it every few ms for readings nobody keeps."""
        while True:
            with memory.paused() if memory is not None else contextlib.nullcontext():
                item = self._queue.get()
            self.taken += 1
            yield item

    def _read(self) -> None:
        pending, dropping = b"", False
        try:  # the raw fd: a daemon thread inside sys.stdin's buffer aborts interpreter shutdown
            while chunk := os.read(self._fd, 1 << 16):
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    if not dropping:
                        self._line(line)
                    dropping = False
                if len(pending) > REQUEST_MAX_BYTES:  # the rest of this line is dropped as it comes
                    pending, dropping = b"", True
                    self._note(f"warning: a request line over {REQUEST_MAX_BYTES} bytes was dropped")
        except OSError:
            pass
        self._on_eof()

    def _line(self, line: bytes) -> None:
        word, _, rest = line.decode("utf-8", "replace").partition(" ")
        try:
            if word == REQUEST_WORD:
                self._queue.put(JobItem.from_json(rest))
            elif word == CANCEL_WORD:
                self._cancelled.add(str(json.loads(rest)))
            elif word:
                raise ValueError(f"unknown word {word[:20]!r}")
        except (ValueError, TypeError, KeyError) as e:
            self._note(f"warning: a request line that does not parse was dropped ({e})"[:300])

    def cancelled(self, item_id: str) -> bool:
        """The host asked to stop this request's answer."""
        return item_id in self._cancelled

    def done(self, item_id: str) -> None:
        """A finished request: its cancel mark and its media (media/<id>/, if the host pushed any) go."""
        self._cancelled.discard(item_id)
        folder = self.media / item_id
        if item_id.replace("-", "").replace("_", "").isalnum() and os.path.isdir(folder):  # never a path
            shutil.rmtree(folder, ignore_errors=True)
