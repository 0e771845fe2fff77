"""`edgefarm serve`'s requests to a runner that stays loaded (`litert_runner.py --serve`).

The host puts each request, one job line of the contract (contract.JobItem), into the job folder as
`requests/<id>.job` with the device's own push (the one channel every transport has: a copy here, SFTP
or rsync to a board, adb sync to a phone); the runner takes the oldest complete file, deletes it and runs
it as a sample, streaming its protocol lines as in a run. `requests/<id>.cancel` asks it to stop that
answer (the client went away); `requests/stop` ends the runner once the request in flight is done.
A file is complete when it is one JSON line ending in a newline (a push still under way is not).
Stdlib only: this module is copied to boards.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

from .contract import JobItem

REQUESTS_DIR = "requests"
STOP_FILE = "stop"
REQUEST_SUFFIX = ".job"
CANCEL_SUFFIX = ".cancel"
REQUEST_MAX_BYTES = 64 * 2**20  # one job line; the host's own bounds keep a request far below it
TORN_AFTER_S = 30.0  # a request file still incomplete this long after its last write is dropped
POLL_MIN_S, POLL_MAX_S = 0.0005, 0.02  # poll fast just after a request, slower when idle


class Inbox:
    """The request folder of one serving runner."""

    def __init__(self, job_dir: Path) -> None:
        self.folder = job_dir / REQUESTS_DIR
        self.folder.mkdir(parents=True, exist_ok=True)
        self.taken = 0

    def items(self) -> Iterator[JobItem]:
        """Requests in the order of their names (the host numbers them), until the stop file."""
        poll = POLL_MIN_S
        while not (self.folder / STOP_FILE).exists():
            names = sorted(n for n in os.listdir(self.folder) if n.endswith(REQUEST_SUFFIX))
            item = next((it for it in map(self._take, names) if it is not None), None)
            if item is None:
                time.sleep(poll)
                poll = min(poll * 1.5, POLL_MAX_S)
                continue
            poll = POLL_MIN_S
            self.taken += 1
            yield item

    def _take(self, name: str) -> JobItem | None:
        path = self.folder / name
        try:
            if path.stat().st_size > REQUEST_MAX_BYTES:
                path.unlink()
                return None
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        try:
            if not text.endswith("\n"):
                raise ValueError("not complete yet")
            item = JobItem.from_json(text)
        except (ValueError, TypeError, KeyError):
            try:  # a push still under way, unless it stopped long ago
                if time.time() - path.stat().st_mtime > TORN_AFTER_S:
                    path.unlink()
            except OSError:
                pass
            return None
        try:
            path.unlink()
        except OSError:
            return None
        return item

    def cancelled(self, item_id: str) -> bool:
        """The host asked to stop this request's answer."""
        return os.path.exists(self.folder / (item_id + CANCEL_SUFFIX))

    def done(self, item_id: str) -> None:
        """A finished request: its cancel mark (if the host left one) and its media (media/<id>/) go."""
        try:
            os.unlink(self.folder / (item_id + CANCEL_SUFFIX))
        except OSError:
            pass
        if item_id.replace("-", "").replace("_", "").isalnum():  # the host's ids; never a path
            shutil.rmtree(self.folder.parent / "media" / item_id, ignore_errors=True)
