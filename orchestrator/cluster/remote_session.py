"""A device's job on its farm host: the SAME worker a single controller runs (`worker.run_job`: the
device's lock, its session, a busy device as the outcome, --resume's figures), on the files the
host's cache holds, with every finished sample handed out as it arrives. The rows come
back unscored: the controller scores every device's rows (cluster/farm.py), so a run loads the
scorer's libraries once, not once per farm host, and the run folder's scores come from one place.

The agent turns these events into a Ray streaming generator; the controller writes them into its
run folder (cluster/farm.py). Events are plain tuples: ("phase", Phase, detail), ("result", SampleResult),
("outcome", DeviceOutcome), ("file", relative path, bytes)."""

from __future__ import annotations

import queue
import shutil
import threading
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path

from android_runner.contract import SampleResult

from ..datasets.types import Part
from ..devices.base import Device
from ..farm.session import DeviceJob, Progress
from ..farm.worker import run_job
from ..fsutil import make_dir

PHASE_POLL_S = 0.5
NOT_SHIPPED = ("job/media/",)  # the controller places the media itself (write_bundle, hard links)


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


def localize(work: DeviceJob, local: Mapping[str, Path]) -> DeviceJob:
    """The same job with the controller's file paths replaced by this host's cached copies."""
    samples = tuple(
        replace(
            s, turns=tuple(replace(t, parts=tuple(_local_part(p, local) for p in t.parts)) for t in s.turns)
        )
        for s in work.samples
    )
    return replace(work, samples=samples, model=replace(work.model, path=local[str(work.model.path)]))


def run_here(device: Device, work: DeviceJob, dev_dir: Path, stop: threading.Event) -> Iterator[tuple]:
    """Run the job in a thread (into `dev_dir`, this host's scratch folder); yield its events, then
    every file it wrote (the job's media aside)."""
    if dev_dir.exists():
        shutil.rmtree(dev_dir)
    make_dir(dev_dir)
    events: queue.Queue = queue.Queue()
    progress = _Forward(work.runs, events)
    box: dict[str, object] = {}

    def session() -> None:
        try:
            box["outcome"] = run_job(device, work, dev_dir, progress, score=None, stop=stop)
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
    if "outcome" not in box:  # run_job never raises: this is a bug, shown as one
        raise RuntimeError(f"the session of {work.device} ended without an outcome")
    yield ("outcome", box["outcome"])
    for path in sorted(p for p in dev_dir.rglob("*") if p.is_file()):
        rel = path.relative_to(dev_dir).as_posix()
        if not rel.startswith(NOT_SHIPPED):
            yield ("file", rel, path.read_bytes())
    shutil.rmtree(dev_dir, ignore_errors=True)
