"""The one device worker: a `DeviceJob` run on its device under the device's one-run lock.

Both farms (`farm.LocalFarm` on this controller, the cluster's agents on their farm hosts) and the
stand-in boards (fallback.py) run every device through `run_job`, so what a device's run does (its
options, the lock, a busy device, --resume's figures) cannot differ between them. What is written
where stays with the farms: the worker returns the outcome, the farm writes outcome.json."""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from ..devices.base import Device
from ..devices.lock import held
from ..errors import EdgefarmError
from ..fsutil import make_dir
from .session import DeviceJob, Progress, run_device
from .types import DeviceOutcome, Phase, Score


def run_job(
    device: Device,
    job: DeviceJob,
    dev_dir: Path,
    progress: Progress,
    *,
    score: Score | None,
    stop: threading.Event,
    clock: Callable[[], float] = time.monotonic,
) -> DeviceOutcome:
    """The device's session into `dev_dir`, never raising: a device another live run holds
    (DeviceBusy, naming the holder's run, pid and host), a folder that cannot be made, or a bug
    becomes the outcome's error, so the other devices go on. `score` None: rows unscored (a farm host's; its controller scores them)."""
    try:
        make_dir(dev_dir)
        # one run per device: a live holder is DeviceBusy
        with held(device, job.opts.run_id, controller=job.controller) as note:
            outcome = run_device(device, job, dev_dir, progress, clock=clock, score=score, stop=stop)
        outcome.notes += [note] if note else []
        return outcome.after(job.earlier)
    except EdgefarmError as e:
        progress.at(Phase.FAILED)
        return DeviceOutcome(name=device.name, kind=device.kind, error=str(e), error_code=e.exit_code)
    except Exception as e:  # noqa: BLE001 - a bug must not take the other devices down; it is reported
        progress.at(Phase.FAILED)
        outcome = DeviceOutcome(name=device.name, kind=device.kind, error_code=1)
        outcome.error = f"internal error: {type(e).__name__}: {e}\n{traceback.format_exc(limit=8)}"
        return outcome
