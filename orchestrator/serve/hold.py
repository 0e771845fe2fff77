"""A served device's run lock (devices/lock.py), held as a run holds it, so `edgefarm run` and `edgefarm
serve` (or the lm-eval harness) never share a phone: whichever comes second is refused with the holder's
run id and the fix. One DeviceHold per device, shared by the engines of its backend units (pixel-8/cpu and
pixel-8/gpu are one phone); the first engine to stage takes it, and it is kept until the server stops. A
device held by another run is an engine down with that reason, tried again as a lost device is
(engine.RETRY_S), so it is served once the run ends (docs/serve.md)."""

from __future__ import annotations

import threading
from contextlib import ExitStack

from ..devices.base import Device
from ..devices.lock import held


class DeviceHold:
    """`device`'s lock for serve session `run_id`, taken once and released once."""

    def __init__(self, device: Device, run_id: str) -> None:
        self.device, self.run_id = device, run_id
        self.note = ""  # the takeover of a dead holder's lock, when there was one
        self._guard = threading.Lock()
        self._stack: ExitStack | None = None

    def take(self) -> None:
        """Held from now on (nothing to do once held); DeviceBusy (or LockUnavailable) while it cannot be."""
        with self._guard:
            if self._stack is None:
                stack = ExitStack()
                self.note = stack.enter_context(held(self.device, self.run_id))
                self._stack = stack

    def release(self) -> None:
        with self._guard:
            if self._stack is not None:
                self._stack.close()
                self._stack = None
