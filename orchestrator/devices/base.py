"""The interface every device kind offers, so the farm never asks what it is talking to."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Protocol

from .feed import Feed
from .types import DeviceInfo, Exit, LineSink, ProgressSink, PushStats


class Device(Protocol):
    name: str
    kind: str  # adb | ssh | local: its row of devices/kinds.py (`kind_spec`) says what it is and can do
    workdir: PurePosixPath  # the device's edgefarm folder (models, runner, runs)
    backend: str  # cpu | gpu | npu, from devices.yaml (the command line may override it)
    threads: int | None  # runtime CPU threads, from devices.yaml (None: the runtime's default)
    on_progress: ProgressSink | None  # told about every file push (the session shows it)

    def info(self) -> DeviceInfo: ...

    def push(self, local: Path, remote: PurePosixPath) -> PushStats:
        """Copy a file or a folder tree; skip every file whose sha256 already matches."""

    def pull(self, remote: PurePosixPath, local: Path) -> int:
        """Copy a device file to the host; returns bytes copied."""

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout_s: float,
        on_line: LineSink | None = None,
        cancel: threading.Event | None = None,
        feed: Feed | None = None,
    ) -> Exit:
        """Run argv (never a shell string); stream each stdout line to on_line. When cancel is set,
        stop waiting and end the command (Exit.cancelled); the runner then stops its own process.
        `feed` (this host and boards): text written to the command's stdin while it runs (feed.py)."""

    def alive(self) -> bool: ...

