"""One device (x backend) of `edgefarm serve`: its runner loaded once for the server's life.

The run's own path, kept running: the device's runner adapter stages the model and the runner as for
`edgefarm run` (an empty job, the run's settings file), then starts the runner in its serve mode
(android_runner/inbox.py). A request is one job line of the contract, made from the request's Sample by
jobs.py as in a run, handed to the runner by the adapter's channel (runners/serve_link.py: a line on its
stdin, or a file in its request folder on a phone) after its media; the runner's protocol lines come back
through the run's RunnerStream (BEGIN, PIECE, RESULT). Requests to one device queue on its lock (at most
`queue_max` waiting); devices answer in parallel, each on its own thread. The engines of one phone's backend
units (pixel-8/cpu, pixel-8/gpu: devices/units.py) share that lock, its turn: a request, a staging or an
engine load has the phone alone, so no backend is timed beside another's work (docs/serve.md).
A runner that dies mid-request fails that request only (its row: crash/killed/oom, as in a run) and is
started again; a device that is lost is marked down and tried again every `retry_s` until it answers.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from android_runner.contract import JobItem, JobPart, SampleResult
from android_runner.status import Status, classify

from ..devices.base import Device
from ..devices.kinds import kind_spec
from ..devices.types import DeviceInfo, PushStats
from ..devices.units import split_unit
from ..errors import BackendUnavailable, EdgefarmError
from ..jobs import JobOptions, job_items
from ..models import ModelSummary
from ..runners.base import RUNNERS, RunnerEvents, RunOptions, Staged
from ..runners.serve_link import ServeRequests
from ..runners.stamp import effective_info
from .api import ApiError, Ask
from .hold import DeviceHold

NUMBERS = 1_000_000  # the native runner's sample numbers are 1..10^6 (native/job.h MAX_SAMPLE_N)
RETRY_S = 5.0  # a device that is down is tried again this often
QUEUE_MAX = 64  # requests waiting for one device; more are refused (503) until it catches up


class Sink(Protocol):
    """Where a request's events go: ("piece", text), then ("result", row) or ("lost", why) or ("error", e)."""

    def put(self, event: tuple[str, Any]) -> None: ...


def request_number(request_id: str) -> int:
    """`req-0000017` -> 17, wrapped into 1..NUMBERS (a request long gone may have had the same number)."""
    return (int(request_id.rsplit("-", 1)[-1]) - 1) % NUMBERS + 1


class Engine:
    """One device's loaded runner and its request queue."""

    def __init__(self, device: Device, model: ModelSummary, opts: RunOptions, folder: Path,
                 on_row: Callable[[Engine, SampleResult], None], queue_max: int = QUEUE_MAX,
                 turn: threading.Lock | None = None, hold: DeviceHold | None = None,
                 on_answered: Callable[[Engine, SampleResult], None] | None = None) -> None:  # fmt: skip
        self.device, self.model, self.opts, self.folder = device, model, opts, folder
        self.hold = hold  # the device's run lock, shared with its sibling units (serve/hold.py)
        self.on_row = on_row  # each finished request's row (the session's record), before its answer goes
        self.on_answered = on_answered  # then, once the answer is handed to its client (the terminal's line)
        self.queue_max = queue_max
        self.device_name = split_unit(device.name)[0]  # a backend unit's device (pixel-8 of pixel-8@gpu)
        self.id = f"{self.device_name}/{opts.backend}"
        self.state = "loading"  # loading | ready | down | stopped
        self.reason = ""  # why it is down
        self.error_code = 0  # the exit code of the error that put it down (6: a backend the device lacks)
        self.info: DeviceInfo | None = None
        self.runner: dict = {}  # the run stamp (runner, runtime version...), filled as the runner starts
        self.init_ms: float | None = None
        self.loads = 0
        self.pushed = (PushStats(), PushStats())  # bytes staged: the model, the rest (outcome.json, as a run's)
        self.served = 0
        self.waiting = 0
        self._lock = turn or threading.Lock()  # one request (staging, load) at a time on the device
        self._holds_turn = False  # staging or loading holds the turn (given back at READY or failure)
        self._count_lock = threading.Lock()
        self._stop = threading.Event()
        self._ready = threading.Event()
        # the request on the device: the runner's id for it, where its events go, set once its row (or its
        # loss) is there, the request's own id
        self._inflight: tuple[str, Sink, threading.Event, str] | None = None
        self._staged: Staged | None = None
        self._adapter = None
        self._requests: ServeRequests | None = None  # how the runner gets its requests (the adapter's)
        self._thread = threading.Thread(target=self._life, name=f"serve:{device.name}", daemon=True)

    # ------------------------------------------------------------------ the runner's life

    def start(self) -> None:
        self._thread.start()

    def _life(self) -> None:
        """Stage, then keep the runner serving until stopped; a failure marks the device down, retried."""
        while not self._stop.is_set():
            self._take_turn()  # staging and the load have the device alone (a sibling unit's requests wait)
            try:
                if self._stop.is_set():  # stopped while it waited for the turn
                    return
                if self._staged is None:
                    self._stage()
                self._serve_once()
            except BackendUnavailable as e:  # the device lacks the backend: not tried again (docs/serve.md)
                self._down(" ".join(e.what.split())[:1000], e.exit_code)
                return
            except EdgefarmError as e:
                self._down(str(e).splitlines()[0], e.exit_code)
                self._staged = None  # a device that comes back is staged again (its files may be gone)
            except Exception as e:  # noqa: BLE001 - a bug must not end the server: the device is down
                self._down(f"{type(e).__name__}: {e}")
            finally:
                self._give_turn()
            if not self._stop.is_set() and self.state == "down":
                self._stop.wait(RETRY_S)

    def _stage(self) -> None:
        self.state, self.reason = "loading", ""
        if self.hold is not None:
            self.hold.take()  # DeviceBusy while a run holds the device: down, tried again
        self.info = effective_info(self.device.info(), self.opts)
        bundle = self.folder / "job"
        bundle.mkdir(parents=True, exist_ok=True)
        (bundle / "job.jsonl").write_text("", encoding="utf-8")  # the requests come one by one (inbox)
        adapter = RUNNERS.get(kind_spec(self.device.kind).runner)(self.device)
        if not hasattr(adapter, "serve"):  # never tried again: it would not get further
            self._stop.set()
            raise EdgefarmError(f"the {adapter.name} runner has no serve mode yet (docs/serve.md, Not built)",
                                where=self.device.name, fix="serve this host and boards (the Python runner)")  # fmt: skip
        self._adapter = adapter
        self._staged = adapter.stage(self.device, bundle, self.model, self.opts)
        self._requests = adapter.serve_requests(self.device, self._staged, bundle)
        self.pushed = (self.pushed[0] + self._staged.model_push, self.pushed[1] + self._staged.other_push)
        self.runner = self._staged.runner  # filled in place as the runner starts (READY: runtime version...)

    def _serve_once(self) -> None:
        staged, adapter = self._staged, self._adapter
        assert staged is not None and adapter is not None
        loads, said = self.loads, []
        events = RunnerEvents(ready=self._on_ready, result=self._on_result, piece=self._on_piece,
                              note=said.append, stop=self._stop)  # fmt: skip
        ex = adapter.serve(self.device, staged, self.opts, events, self._requests)
        with self._count_lock:  # a request handed over from now on waits for the next load
            self._ready.clear()
            slot = self._inflight
        if self._stop.is_set():
            return
        how = f"signal {ex.signal}" if ex.signal else f"exit code {ex.code}"
        if self.loads == loads:
            why = "; ".join([*said[-3:], ex.output_tail.strip()[-300:]]).strip("; ")
            raise EdgefarmError(f"the runner stopped before its model was ready ({how}){': ' + why if why else ''}",
                                where=self.device.name, fix="see runner.log in the device's job folder")  # fmt: skip
        if slot is not None:  # the runner died during this request: its row, and a 503 for it alone
            row = SampleResult(id=slot[0], status=classify(ex.code, ex.signal) if ex.signal else Status.CRASH,
                               error=f"runner died during this request ({how})", exit_code=ex.code,
                               signal=ex.signal, backend=self.opts.backend, runner=self.runner.get("runner", ""))  # fmt: skip
            self._on_result(row)
        self.state, self.reason = "loading", f"runner restarted after {how}"

    def _take_turn(self) -> None:
        self._lock.acquire()
        self._holds_turn = True

    def _give_turn(self) -> None:
        with self._count_lock:
            held, self._holds_turn = self._holds_turn, False
        if held:
            self._lock.release()

    def _on_ready(self, init_ms: float | None) -> None:
        self.init_ms, self.loads = init_ms, self.loads + 1
        self.state, self.reason, self.error_code = "ready", "", 0
        self._give_turn()  # loaded: the device's requests (this backend's and its siblings') go on
        self._ready.set()

    def _on_piece(self, item_id: str, text: str) -> None:
        slot = self._inflight
        if slot is not None and slot[0] == item_id:
            slot[1].put(("piece", text))

    def _on_result(self, row: SampleResult) -> None:
        """A request's row (the runner's id is the request's number): named by its request id."""
        slot = self._inflight
        if slot is None or slot[0] != row.id:
            return  # not the request in flight (a stale line after a restart): nobody waits for it
        row = replace(row, id=slot[3])
        self.on_row(self, row)
        slot[1].put(("result", row))
        slot[2].set()
        if self.on_answered is not None:  # off the answer's path: the client is not kept waiting for it
            self.on_answered(self, row)

    def _down(self, reason: str, code: int = 1) -> None:
        self.state, self.reason, self.error_code = "down", reason, code
        with self._count_lock:
            self._ready.clear()
            slot = self._inflight
        if slot is not None:
            slot[1].put(("lost", reason))
            slot[2].set()

    # ------------------------------------------------------------------ requests

    def unavailable(self) -> ApiError | None:
        """Why a request cannot be taken now (503), or None."""
        if self.state == "down" and self.error_code == BackendUnavailable.exit_code:
            return ApiError(503, f"{self.id} is down: {self.reason}; not tried again (the device's other backends "
                            "serve)", code="backend_unavailable")  # fmt: skip
        if self.state == "down":
            return ApiError(503, f"{self.id} is down: {self.reason}; it is tried again every {RETRY_S:g} s and "
                            "comes back when the device answers", code="device_unavailable")  # fmt: skip
        if self.state == "stopped":
            return ApiError(503, "the server is stopping", code="stopping")
        return None

    def ask(self, ask: Ask, request_dir: Path, events: Sink, cancelled: threading.Event) -> None:
        """Run one request on the device; its pieces, then ("result", row) or ("lost", why), go to `events`.
        Blocks while the device answers earlier requests (FIFO on the device's lock)."""
        with self._count_lock:
            if self.waiting >= self.queue_max:
                raise ApiError(503, f"{self.id} has {self.waiting} requests waiting (edgefarm serve --queue-max "
                               f"{self.queue_max})", code="queue_full")  # fmt: skip
            self.waiting += 1
        try:
            while self._wait_ready(events, cancelled):  # a load holds the device's turn: wait outside it
                with self._lock:
                    if self._ask_locked(ask, request_dir, events, cancelled):
                        return
        finally:
            with self._count_lock:
                self.waiting -= 1

    def _wait_ready(self, events: Sink, cancelled: threading.Event) -> bool:
        """Until the engine is loaded (True); False when the request ends here (down: 503; client gone)."""
        while not self._ready.is_set():  # loading or restarting
            if (err := self.unavailable()) is not None:
                events.put(("error", err))
                return False
            if cancelled.is_set():
                return False
            self._ready.wait(0.2)
        return True

    def _ask_locked(self, ask: Ask, request_dir: Path, events: Sink, cancelled: threading.Event) -> bool:
        """The request on the device (its turn held); False if the runner ended before it was handed over."""
        requests = self._requests
        if self._staged is None or requests is None:  # lost since it was ready: wait (503 once it is down)
            return False
        item = self._job_item(ask, request_dir)
        done = threading.Event()
        with self._count_lock:  # handed to this runner, or it ended first (its restart then takes the turn)
            if not self._ready.is_set():
                return False
            self._inflight = (item.id, events, done, ask.sample.id)
        try:
            requests.send(item, request_dir / "media")
            while not done.wait(0.05):  # a client gone mid-answer: the runner stops it, the device is free
                if cancelled.is_set():
                    requests.cancel(item.id)
                    done.wait()
        except EdgefarmError as e:  # the device went away while the request was handed over
            events.put(("lost", str(e).splitlines()[0]))
        finally:
            self._inflight = None
            self.served += 1
        return True

    def _job_item(self, ask: Ask, request_dir: Path) -> JobItem:
        """The request as the contract's job line, made by jobs.py as in a run; media under the request's id."""
        opts = JobOptions(max_output_tokens=ask.max_tokens, override=True, sampler=ask.sampler, fidelity=ask.fidelity)
        (item,) = job_items([ask.sample], opts, media_dir=request_dir / "media")
        rid = str(request_number(ask.sample.id))  # the runner's id: a number (the native runner's `S n`)

        def moved(parts: tuple[JobPart, ...]) -> tuple[JobPart, ...]:
            return tuple(replace(p, path=f"media/{rid}/{Path(p.path).name}") if p.path else p for p in parts)

        turns = tuple(moved(t) for t in item.turns)
        history = tuple(zip(ask.history_roles, turns[:-1]))
        return replace(item, id=rid, turns=turns[-1:], history=history, stream=ask.stream)

    # ------------------------------------------------------------------ the end

    def stop(self) -> None:
        """Drain: the request in flight finishes (the device's turn), then the runner is stopped for certain;
        a load in progress is not waited for (its runner is stopped)."""
        if self._holds_turn:
            self._stop.set()
        got = self._lock.acquire(timeout=self.opts.sample_timeout_s + 30)  # a request ends within its timeout
        if self.state != "down":  # a model down at the end keeps its reason (its outcome.json says it)
            self.state = "stopped"
        self._stop.set()
        if got:
            self._lock.release()
        self._thread.join(timeout=30)
        if self._staged is not None and self._adapter is not None:
            try:
                self._adapter.stop(self.device, self._staged)
            except EdgefarmError:
                pass
