"""All devices at once: the `Farm` protocol, the thread-and-progress loop every farm drives, and the
farm of this controller (`LocalFarm`: a lane runs its devices one after another, as this host's
devices share its CPU). The Ray farm (cluster/controller.ClusterFarm) is the other implementation:
same jobs in, same outcomes out, every device through the same worker (worker.run_job)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any, Protocol

from rich.console import Console

from ..errors import EdgefarmError
from ..measure import count_unit
from ..progress import FarmProgress
from .rundir import write_outcome
from .session import DeviceJob, Progress
from .types import DeviceOutcome, Phase, Score
from .worker import run_job


class Farm(Protocol):
    """Runs every device's job, all at once, and returns their outcomes in `devices` order. Each
    device's folder (`job.folder`) ends with the same files whichever farm ran it. Setting `stop`
    (Ctrl-C) makes every session stop its runner and keep what finished; devices whose turn had not
    come start nothing."""

    def run(
        self,
        devices: Sequence[Any],
        jobs: Mapping[str, DeviceJob],
        console: Console,
        score: Score | None,
        stop: threading.Event,
    ) -> list[DeviceOutcome]: ...


def drive(
    lanes: Sequence[Sequence[str]],
    work: Callable[[str], DeviceOutcome],
    states: Mapping[str, Progress],
    console: Console,
    stop: threading.Event,
    kinds: Mapping[str, str],
    units: Mapping[str, str] | None = None,
) -> dict[str, DeviceOutcome]:
    """Each lane in its own thread (its devices one after another), one progress bar (or plain line)
    per device, updated from `states` until the last lane ends. A device whose turn comes after a
    Ctrl-C starts nothing and writes nothing. A bug in a farm's `work` is raised. `units`: what each
    device's progress counts (job_unit), said in its rate."""
    outcomes: dict[str, DeviceOutcome] = {}

    def lane_work(lane: Sequence[str]) -> None:
        for name in lane:
            if stop.is_set():
                states[name].at(Phase.INTERRUPTED)
                outcomes[name] = DeviceOutcome(name=name, kind=kinds[name], interrupted=True)
            else:
                outcomes[name] = work(name)

    bars = FarmProgress(
        console, {n: st.total for n, st in states.items()}, units=units
    )  # or plain lines when piped
    with bars, ThreadPoolExecutor(max_workers=max(1, len(lanes)), thread_name_prefix="device") as pool:
        futures = [pool.submit(lane_work, lane) for lane in lanes]
        while True:
            for name, st in states.items():
                bars.update(name, st.done, st.ok, st.failed, st.shown, st.current, earlier=st.earlier)
            if not wait(futures, timeout=0.1).not_done:  # returns the moment the last ends
                break
        for name, st in states.items():
            bars.update(name, st.done, st.ok, st.failed, st.shown, earlier=st.earlier)
        for f in futures:
            f.result()
    return outcomes


def job_unit(job: DeviceJob) -> str:
    """What a device's progress counts: "samples", or "runs" when --repeat/--warmup/--sustain run a
    sample more than once (measure.count_unit)."""
    return count_unit(len(job.samples), job.runs)


class LocalFarm:
    """The devices this controller reaches itself (adb servers, ssh, this host)."""

    def __init__(self, lanes: Sequence[Sequence[str]] | None = None) -> None:
        self.lanes = [tuple(lane) for lane in lanes] if lanes else None  # default: a lane per device

    def run(
        self,
        devices: Sequence[Any],
        jobs: Mapping[str, DeviceJob],
        console: Console,
        score: Score | None,
        stop: threading.Event,
    ) -> list[DeviceOutcome]:
        by_name = {d.name: d for d in devices}
        states = {d.name: jobs[d.name].progress() for d in devices}
        lanes = [kept for lane in self.lanes or () if (kept := tuple(n for n in lane if n in by_name))]
        lanes += [(n,) for n in by_name if not any(n in lane for lane in lanes)]  # a lane each by default

        def work(name: str) -> DeviceOutcome:
            job = jobs[name]
            outcome = run_job(by_name[name], job, job.folder, states[name], score=score, stop=stop)
            try:
                write_outcome(job.folder, outcome)
            except EdgefarmError as e:
                outcome.error = outcome.error or str(e)
            return outcome

        units = {n: job_unit(jobs[n]) for n in by_name}
        outcomes = drive(lanes, work, states, console, stop, {d.name: d.kind for d in devices}, units)
        return [outcomes[d.name] for d in devices]
