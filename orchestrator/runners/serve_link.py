"""How a serving runner gets its requests (`edgefarm serve`): one concept, the adapter's choice of channel.

Either way a request is the contract's job line (the run's own record) and its media a folder pushed
first to `JOB/media/<id>/` with the device's push; only how the line reaches the runner differs:

- `StdinRequests`, the Python runner (this host, boards): a `REQUEST <job line>` line on the runner's
  stdin, which the host holds anyway (a pipe here, the SSH channel to a board) and the runner reads with
  a thread of its own (android_runner/inbox.py), so it starts the request the moment the line arrives.
  Measured on this host (docs/benchmarks/serve.md, loaded): from the job line made to the runner holding it,
  p50 1.1 ms with a polled request folder (the push, then the runner's next look), 0.47 ms with the line.
- `FolderRequests`, the native runner on a phone: its driver starts it in the background (stdin
  /dev/null), so the request is a job file of one sample pushed into `JOB/requests/` (adb sync), which
  the runner polls (android_runner/native/edgefarm_runner.c `--serve`); a cancel is a mark `<id>.cancel`
  pushed beside it, which the runner looks for while it streams an answer (android_runner/native/stream.c).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from android_runner.contract import JobItem
from android_runner.inbox import CANCEL_SUFFIX, CANCEL_WORD, REQUEST_SUFFIX, REQUEST_WORD, REQUESTS_DIR

from ..devices.base import Device
from ..devices.feed import Feed
from ..errors import EdgefarmError


def push_media(device: Device, media: Path | None, job: PurePosixPath, item_id: str) -> None:
    """The request's media folder, before its line: the runner finds its files under media/<id>/."""
    if media is not None and media.is_dir():
        device.push(media, job / "media" / item_id)


class StdinRequests:
    """Requests as lines on the runner's stdin (the Python runner); `feed` is given to `device.run`."""

    def __init__(self, device: Device, job: PurePosixPath) -> None:
        self.device, self.job = device, job
        self.feed = Feed(device.name)

    def send(self, item: JobItem, media: Path | None) -> None:
        push_media(self.device, media, self.job, item.id)
        self.feed.send(f"{REQUEST_WORD} {item.to_json()}\n")

    def cancel(self, item_id: str) -> None:
        """The client went away: the runner stops this answer at its next piece."""
        try:
            self.feed.send(f"{CANCEL_WORD} {json.dumps(item_id)}\n")
        except EdgefarmError:
            pass  # the runner is gone: nothing to stop


class FolderRequests:
    """Requests as files pushed into the runner's request folder (the native runner on a phone)."""

    feed = None  # the phone's runner does not read its stdin

    def __init__(self, device: Device, job: PurePosixPath, render: Callable[[JobItem], bytes],
                 scratch: Path) -> None:  # fmt: skip
        self.device, self.job, self.render = device, job, render
        self.scratch = scratch  # the host's copy of a request file, gone once pushed

    def send(self, item: JobItem, media: Path | None) -> None:
        push_media(self.device, media, self.job, item.id)
        line = self.scratch / f"{int(item.id):09d}{REQUEST_SUFFIX}"
        line.write_bytes(self.render(item))
        try:
            self.device.push(line, self.job / REQUESTS_DIR / line.name)
        finally:
            line.unlink(missing_ok=True)

    def cancel(self, item_id: str) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            mark = Path(tmp) / (item_id + CANCEL_SUFFIX)
            mark.write_text("\n", encoding="utf-8")
            try:
                self.device.push(mark, self.job / REQUESTS_DIR / mark.name)
            except EdgefarmError:
                pass


ServeRequests = StdinRequests | FolderRequests
