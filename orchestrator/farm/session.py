"""One device, one run: stage -> execute -> collect -> score, into the device's run folder.

`DeviceJob` is everything a device's session is given; the one worker that runs it (lock, busy
device, --resume's earlier figures) is `worker.run_job`, on this controller or on a farm host.

A failed sample is a row status, not an exception; only setup failures (device unreachable, model
unloadable) end a device's session, and they are returned as the outcome's error, never raised
past the farm, so the other devices go on.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TextIO

from android_runner.contract import SampleResult, read_results
from android_runner.status import SKIPPED_STATUSES

from ..datasets.types import Dataset, Sample
from ..devices.base import Device
from ..devices.kinds import kind_spec
from ..errors import EdgefarmError
from ..fsutil import output_errors, write_json_atomic, write_text_atomic
from ..interrupt import Interrupted, raise_if_set
from ..jobs import JobOptions, write_bundle
from ..measure import expand, expand_resumed, split
from ..models import ModelSummary
from ..runners.base import RUNNERS, RunnerEvents, RunOptions
from ..runners.stamp import effective_info, run_settings, state_span
from ..scoring import report_json, score_safely
from .types import DeviceOutcome, Phase, Score

STREAM_FILE = "results.stream.jsonl"  # results as they arrive; replaced by results.jsonl at the end


@dataclass(frozen=True)
class DeviceJob:
    """One device's share of a run, as both farms hand it to the worker (Ray pickles it to a farm
    host; paths are the controller's, a farm host swaps in its cached copies)."""

    device: str
    dataset: Dataset
    samples: tuple[Sample, ...]  # the device's share (--shard), or the run's samples
    model: ModelSummary
    opts: RunOptions  # resolved for this device: --backend/--threads over its devices.yaml pins
    job_opts: JobOptions
    folder: Path  # the device's folder in the run, on the controller
    earlier: DeviceOutcome | None = None  # --resume: the counted figures of the run's earlier sessions
    # --resume: ids of the runs earlier sessions finished (finished_ids)
    finished: frozenset[str] = frozenset()
    # a farm host's job: PID@HOST of the run's controller (devices/lock.controller_id), named in its lock
    controller: str = ""

    @property
    def items(self) -> tuple[Sample, ...]:
        """What the device runs: warm-ups, the samples, and every --repeat / --sustain pass (a resumed
        session: the earlier warm-ups, new ones when a measured run is left, then every pass)."""
        if self.finished:
            return expand_resumed(self.samples, self.opts.repeat, self.opts.warmup, self.opts.sustain,
                                  self.finished)  # fmt: skip
        return expand(self.samples, self.opts.repeat, self.opts.warmup, self.opts.sustain)

    @property
    def runs(self) -> int:
        """The progress total: every run the device makes."""
        return len(self.items)

    @property
    def kept(self) -> int:
        """Runs of this job that earlier sessions finished (--resume): the runner replays them first."""
        return sum(1 for s in self.items if s.id in self.finished) if self.finished else 0

    def progress(self) -> Progress:
        return Progress(total=self.runs, earlier=self.kept)


@dataclass
class Progress:
    """What the farm's progress display needs; updated from the device's thread."""

    total: int
    earlier: int = 0  # of `total`, the runs earlier sessions finished (--resume): not in the rate
    done: int = 0
    ok: int = 0
    failed: int = 0
    current: str = ""
    phase: Phase = Phase.WAITING
    detail: str = ""  # shown instead of the phase while set (a big push's progress)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def at(self, phase: Phase) -> None:
        self.phase, self.detail = phase, ""

    @property
    def shown(self) -> str:
        return self.detail or self.phase.value

    def pushing(self, remote: str, sent: int, size: int) -> None:
        """Push progress of big files (a model) in the phase text; small files pass silently."""
        if size >= 8 * 2**20:
            name = remote.rsplit("/", 1)[-1][:24]
            self.detail = f"pushing {name} {sent * 100 // size}%"

    def record(self, r: SampleResult) -> None:
        """Count one finished sample (the caller counts each sample once)."""
        with self._lock:
            self.done += 1
            if r.status == "ok":
                self.ok += 1
            elif r.status not in SKIPPED_STATUSES:
                self.failed += 1


def outputs_for_scoring(results: Sequence[SampleResult]) -> dict[str, str | None]:
    """EdgeMMEval results.json: ok -> its text; error/timeout/crash/oom/killed -> "" (scored, fails);
    unsupported -> None (skipped)."""
    out: dict[str, str | None] = {}
    for r in results:
        if r.status == "ok":
            out[r.id] = r.output
        elif r.status in SKIPPED_STATUSES:
            out[r.id] = None
        else:
            out[r.id] = ""
    return out


def run_device(
    device: Device,
    job: DeviceJob,
    dev_dir: Path,
    progress: Progress,
    clock: Callable[[], float],
    score: Score | None,
    stop: threading.Event | None = None,
) -> DeviceOutcome:
    """Never raises for anything the device returns or the dataset holds: the failure is the outcome's.
    `score` None: the rows are written unscored and the caller scores them (a cluster's controller)."""
    dataset, samples, model, opts = job.dataset, job.samples, job.model, job.opts
    outcome = DeviceOutcome(name=device.name, kind=device.kind)
    streamed: dict[str, SampleResult] = {}  # what came back, kept even when the device fails later
    stop = stop or threading.Event()
    t0 = clock()
    staged = None
    try:
        progress.at(Phase.INFO)
        # device.json: the report's device, with the backend and threads the run used
        # named as the run names it: a backend unit's info is its device's (devices/units.py)
        outcome.info = replace(effective_info(device.info(), opts), name=device.name)
        write_json_atomic(dev_dir / "device.json", asdict(outcome.info))
        progress.at(Phase.STAGING)

        def pushing(remote: str, sent: int, size: int) -> None:  # a Ctrl-C ends a push at its next block
            raise_if_set(stop)
            progress.pushing(remote, sent, size)

        device.on_progress = pushing
        items = write_bundle(job.items, dev_dir / "job", job.job_opts, stop)
        adapter = RUNNERS.get(kind_spec(device.kind).runner)(device)
        staged = adapter.stage(device, dev_dir / "job", model, opts)
        outcome.model_push, outcome.other_push = staged.model_push, staged.other_push
        outcome.notes += staged.notes
        outcome.runner = {**staged.runner, "settings": run_settings(opts, model, items)}
        raise_if_set(stop)
        progress.at(Phase.LOADING)
        with output_errors(dev_dir / STREAM_FILE):
            stream = open(dev_dir / STREAM_FILE, "a", encoding="utf-8")  # noqa: SIM115 - closed below
        with stream:
            events = _events(stream, streamed, progress, outcome, stop, where=dev_dir / STREAM_FILE)
            outcome.results = adapter.execute(device, staged, items, opts, events)
        outcome.interrupted = stop.is_set() and len(outcome.results) < len(items)
        outcome.results, outcome.repeats = _keep_measurements(samples, outcome.results, dev_dir)
        progress.at(Phase.COLLECTING)
        adapter.collect(device, staged, dev_dir / "raw")
    except Interrupted:
        outcome.interrupted = True
        outcome.results = [streamed[s.id] for s in samples if s.id in streamed]
    except EdgefarmError as e:
        outcome.error = str(e)
        outcome.error_code = e.exit_code
        progress.at(Phase.FAILED)
        outcome.results = [streamed[s.id] for s in samples if s.id in streamed]  # scored; the rest skipped
    finally:
        outcome.wall_s = clock() - t0
        if staged is not None:  # what the runner itself reported once it ran (e.g. its runtime's version)
            outcome.runner.update(staged.runner)
        if outcome.runner:
            outcome.runner["state"] = state_span(outcome.results)
    if outcome.results or not outcome.error:
        try:
            write_results(outcome, dataset, samples, dev_dir, score)
        except EdgefarmError as e:  # the results are in the stream file: --resume rebuilds the reports
            outcome.error = outcome.error or str(e)
            outcome.error_code = outcome.error_code or e.exit_code
            return outcome
    (dev_dir / STREAM_FILE).unlink(missing_ok=True)
    if outcome.interrupted:
        progress.at(Phase.INTERRUPTED)
    elif not outcome.error:
        progress.at(Phase.DONE)
    return outcome


def _events(
    stream: TextIO,
    streamed: dict[str, SampleResult],
    progress: Progress,
    outcome: DeviceOutcome,
    stop: threading.Event,
    where: Path = Path(STREAM_FILE),
) -> RunnerEvents:
    """Runner callbacks: each new result is appended to the stream file and counted once; each
    model load is counted."""

    def on_result(r: SampleResult) -> None:
        if r.id not in streamed:
            with output_errors(where):  # a full disk: the device stops with exit 5, resumable
                stream.write(r.to_json() + "\n")
                stream.flush()
            progress.record(r)
        streamed[r.id] = r

    def on_begin(sample_id: str) -> None:
        progress.at(Phase.RUNNING)
        progress.current = sample_id

    def on_ready(init_ms: float | None) -> None:
        outcome.model_loads += 1
        progress.at(Phase.RUNNING)

    return RunnerEvents(
        ready=on_ready, begin=on_begin, result=on_result, note=outcome.notes.append, stop=stop
    )


def _keep_measurements(
    samples: Sequence[Sample], results: Sequence[SampleResult], dev_dir: Path
) -> tuple[list[SampleResult], list[SampleResult]]:
    """--repeat / --warmup: the extra runs go to repeats.jsonl / warmup.jsonl; the first run of each
    sample is its row. The rows and the repeats (the outcome keeps both: `edgefarm bench` takes its
    figures from them in memory)."""
    first, repeats, warm = split(samples, results)
    for name, rows in (("repeats.jsonl", repeats), ("warmup.jsonl", warm)):
        if rows:
            write_text_atomic(dev_dir / name, "".join(r.to_json() + "\n" for r in rows))
    return first, repeats


def finished_ids(dev_dir: Path) -> frozenset[str]:
    """The ids of every run a device folder holds: rows (results.jsonl), the other passes
    (repeats.jsonl), warm-ups (warmup.jsonl) and what streamed in a session that ended without writing
    them (a killed edgefarm). What a resume keeps and an interrupted run counts."""
    ids: set[str] = set()
    for name in ("results.jsonl", "repeats.jsonl", "warmup.jsonl", STREAM_FILE):
        if (dev_dir / name).is_file():
            ids.update(r.id for r in read_results(str(dev_dir / name)))
    return frozenset(ids)


def write_results(
    outcome: DeviceOutcome, dataset: Dataset, samples: Sequence[Sample], dev_dir: Path, score: Score | None
) -> None:
    """The rows (results.jsonl) and, unless `score` is None, their scores (results.json, report.json)."""
    write_text_atomic(dev_dir / "results.jsonl", "".join(r.to_json() + "\n" for r in outcome.results))
    if score is None:
        return
    outputs = outputs_for_scoring(outcome.results)
    write_json_atomic(dev_dir / "results.json", {k: v for k, v in outputs.items()})
    subset = replace(dataset, samples=tuple(samples))
    report = report_json(score_safely(score, subset, outputs))
    outcome.report = report
    write_json_atomic(dev_dir / "report.json", report)
