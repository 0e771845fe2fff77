"""A device's session on its farm host: the SAME `session.run_device` a single controller runs, on
the files the host's cache holds, with every finished sample handed out as it arrives. The rows come
back unscored: the controller scores every device's rows (cluster/farm.py), so a run loads the
scorer's libraries once, not once per farm host, and the run folder's scores come from one place.

The agent turns these events into a Ray streaming generator; the controller writes them into its
run folder (cluster/farm.py). Events are plain tuples: ("phase", Phase, detail), ("result", SampleResult),
("outcome", DeviceOutcome), ("file", relative path, bytes)."""

from __future__ import annotations

import queue
import shutil
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from android_runner.contract import SampleResult

from ..datasets.types import Dataset, Part, Sample
from ..devices.base import Device
from ..devices.lock import DeviceBusy, held
from ..fsutil import make_dir
from ..jobs import JobOptions
from ..measure import measured_count
from ..models import ModelSummary
from ..run.types import DeviceOutcome
from ..runners.base import RunOptions
from ..session import Progress, run_device

PHASE_POLL_S = 0.5
NOT_SHIPPED = ("job/media/",)  # the controller places the media itself (write_bundle, hard links)


@dataclass(frozen=True)
class DeviceWork:
    """What the controller sends for one device (paths are the controller's)."""

    device: str
    dataset: Dataset
    samples: tuple[Sample, ...]
    model: ModelSummary
    opts: RunOptions
    job_opts: JobOptions
    controller: str = ""  # PID@HOST of the run's controller (devices/lock.controller_id): the lock names it


class _Forward(Progress):
    """A session's progress that also queues each finished sample for the controller."""

    def __init__(self, total: int, out: queue.Queue) -> None:
        super().__init__(total=total)
        self._out = out

    def record(self, r: SampleResult) -> None:
        super().record(r)
        self._out.put(("result", r))


def _local_part(p: Part, local: Mapping[str, Path]) -> Part:
    return replace(p, path=local[str(p.path)]) if p.path is not None else p


def localize(work: DeviceWork, local: Mapping[str, Path]) -> DeviceWork:
    """The same work with the controller's file paths replaced by this host's cached copies."""
    samples = tuple(
        replace(
            s, turns=tuple(replace(t, parts=tuple(_local_part(p, local) for p in t.parts)) for t in s.turns)
        )
        for s in work.samples
    )
    return replace(work, samples=samples, model=replace(work.model, path=local[str(work.model.path)]))


def locked_session(
    device: Device, work: DeviceWork, dev_dir: Path, progress: Progress, stop: threading.Event
) -> DeviceOutcome:
    """`session.run_device` under the device's one-run lock, as `farm.run_farm` runs it on one
    controller: a device another live run holds is refused at once (DeviceBusy, the outcome's error,
    naming the holder's run, pid and host), so a cluster run and a plain run never share a phone."""
    try:
        with held(device, work.opts.run_id, controller=work.controller) as note:
            outcome = run_device(device, work.dataset, work.samples, work.model, work.opts, work.job_opts,
                                 dev_dir, progress, clock=time.monotonic, score=None, stop=stop)  # fmt: skip
    except DeviceBusy as e:
        return DeviceOutcome(name=device.name, kind=device.kind, error=str(e), error_code=e.exit_code)
    outcome.notes += [note] if note else []
    return outcome


def run_here(device: Device, work: DeviceWork, dev_dir: Path, stop: threading.Event) -> Iterator[tuple]:
    """Run the session in a thread; yield its events, then every file it wrote (the job's media aside)."""
    if dev_dir.exists():
        shutil.rmtree(dev_dir)
    make_dir(dev_dir)
    events: queue.Queue = queue.Queue()
    progress = _Forward(measured_count(len(work.samples), work.opts.repeat, work.opts.warmup), events)
    box: dict[str, object] = {}

    def session() -> None:
        try:
            box["outcome"] = locked_session(device, work, dev_dir, progress, stop)
        finally:
            events.put(("end",))

    threading.Thread(target=session, name=f"session-{work.device}", daemon=True).start()
    shown = None
    while True:
        try:
            event = events.get(timeout=PHASE_POLL_S)
        except queue.Empty:
            event = None
        if (progress.phase, progress.detail) != shown:
            shown = (progress.phase, progress.detail)
            yield ("phase", *shown)
        if event is None:
            continue
        if event[0] == "end":
            break
        yield event
    if "outcome" not in box:  # run_device never raises for device trouble: this is a bug, shown as one
        raise RuntimeError(f"the session of {work.device} ended without an outcome")
    yield ("outcome", box["outcome"])
    for path in sorted(p for p in dev_dir.rglob("*") if p.is_file()):
        rel = path.relative_to(dev_dir).as_posix()
        if not rel.startswith(NOT_SHIPPED):
            yield ("file", rel, path.read_bytes())
    shutil.rmtree(dev_dir, ignore_errors=True)
