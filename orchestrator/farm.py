"""All devices at once: one worker thread per lane (a lane runs its devices one after another: this
host's devices share its CPU), one progress bar (or plain line) per device."""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path

from rich.console import Console

from .datasets.types import Dataset, Sample
from .devices.base import Device
from .devices.lock import held
from .errors import EdgefarmError
from .fsutil import make_dir
from .jobs import JobOptions
from .measure import measured_count
from .models import ModelSummary
from .progress import FarmProgress
from .run.types import DeviceOutcome, Phase, Score
from .rundir import device_folder, read_outcome, write_outcome
from .runners.base import RunOptions
from .session import Progress as DeviceProgress
from .session import run_device


def run_farm(
    devices: Sequence[Device],
    dataset: Dataset,
    samples: Sequence[Sample],
    model: ModelSummary,
    opts: Mapping[str, RunOptions],
    job_opts: JobOptions,
    run_dir: Path,
    console: Console,
    score: Score,
    stop: threading.Event | None = None,
    assignment: Mapping[str, Sequence[Sample]] | None = None,
    lanes: Sequence[Sequence[str]] | None = None,
) -> list[DeviceOutcome]:
    """Every device's session, each lane in its own thread (default: a lane per device). Setting
    `stop` (Ctrl-C) makes every session stop its runner, keep what finished and return, and the
    devices still waiting in a lane start nothing; the farm then returns all outcomes, in `devices`
    order. `assignment` (--shard) gives a device its own share of the samples; without it every
    device runs them all. A device folder with an outcome.json of an earlier session (--resume) adds
    that session's counted figures to this one's (DeviceOutcome.after)."""
    stop = stop or threading.Event()
    by_name = {d.name: d for d in devices}
    lanes = [tuple(lane) for lane in (lanes or [(d.name,) for d in devices])]
    share = {d.name: (assignment or {}).get(d.name, samples) for d in devices}
    runs = {
        d.name: measured_count(
            len(share[d.name]), opts[d.name].repeat, opts[d.name].warmup, opts[d.name].sustain
        )
        for d in devices
    }
    states = {d.name: DeviceProgress(total=runs[d.name]) for d in devices}
    bars = FarmProgress(console, runs)  # bars, or plain lines when piped
    outcomes: dict[str, DeviceOutcome] = {}

    def work(device: Device) -> DeviceOutcome:
        dev_dir = device_folder(run_dir, device.name)
        if stop.is_set():  # its turn came after a Ctrl-C: nothing starts
            states[device.name].at(Phase.INTERRUPTED)
            return DeviceOutcome(name=device.name, kind=device.kind, interrupted=True)
        try:
            make_dir(dev_dir)
            earlier = read_outcome(dev_dir)
            with held(device, run_dir.name) as note:  # one run per device; a live holder: DeviceBusy
                outcome = run_device(
                    device,
                    dataset,
                    share[device.name],
                    model,
                    opts[device.name],
                    job_opts,
                    dev_dir,
                    states[device.name],
                    clock=time.monotonic,
                    score=score,
                    stop=stop,
                ).after(earlier)
            outcome.notes += [note] if note else []
        except EdgefarmError as e:  # the device folder itself cannot be made (disk full, read-only)
            outcome = DeviceOutcome(name=device.name, kind=device.kind, error=str(e), error_code=e.exit_code)
        except Exception as e:  # noqa: BLE001 - a bug must not take the other devices down; it is reported
            states[device.name].at(Phase.FAILED)
            outcome = DeviceOutcome(name=device.name, kind=device.kind, error_code=1)
            outcome.error = f"internal error: {type(e).__name__}: {e}\n{traceback.format_exc(limit=8)}"
        try:
            write_outcome(dev_dir, outcome)
        except EdgefarmError as e:
            outcome.error = outcome.error or str(e)
        return outcome

    def lane_work(lane: Sequence[str]) -> None:
        for name in lane:
            outcomes[name] = work(by_name[name])

    with bars:  # noqa: SIM117 - the pool block stays as it was
        with ThreadPoolExecutor(max_workers=max(1, len(lanes)), thread_name_prefix="device") as pool:
            futures = [pool.submit(lane_work, lane) for lane in lanes]
            while True:
                for name, st in states.items():
                    bars.update(name, st.done, st.ok, st.failed, st.shown, st.current)
                if not wait(futures, timeout=0.1).not_done:  # returns the moment the last ends
                    break
            for name, st in states.items():
                bars.update(name, st.done, st.ok, st.failed, st.shown)
            for f in futures:
                f.result()  # a bug in the farm itself is raised, not hidden
            return [outcomes[d.name] for d in devices]
