"""Host side of the Python runner (`android_runner/litert_runner.py`) on this host and Linux boards.

The runner is a child process. When it dies mid-run (SIGABRT from a broken model or runtime, a
SIGKILL) the sample in flight is recorded as crash/killed (oom only with evidence: status.py),
merged into the device's results file, and the runner is started again for the samples left. A
death before the engine is ready is a device error (BackendUnavailable when the runtime could not
have the backend asked): nothing would get further.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import signal
import tempfile
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import NoReturn

from android_runner.backend import BACKEND_UNAVAILABLE_KINDS, engine_failure
from android_runner.contract import JobItem, SampleResult, parse_results
from android_runner.settings import SETTINGS_FILE
from android_runner.status import (
    BACKEND_UNAVAILABLE_EXIT,
    MODEL_UNLOADABLE_EXIT,
    TIMEOUT_EXIT,
    Status,
    classify,
)

from ..bundled import REPO_ROOT
from ..devices.base import Device
from ..devices.files import runner_sha256
from ..devices.types import DeviceInfo, Exit, LineSink, PushStats
from ..errors import DeviceError, ModelError, backend_unavailable
from ..model_facts import memory_refusal
from ..models import ModelSummary
from ..telemetry.energy import energy_fields
from ..telemetry.phases import prefill_ms, ttft_phases
from .base import Check, Need, RunnerEvents, RunOptions, Staged
from .serve_link import StdinRequests

RUNNER_FILES = (
    "__init__.py",
    "settings.py",
    "runtime_pin.py",
    "answer_text.py",
    "backend.py",
    "contract.py",
    "conversation.py",
    "fidelity.py",
    "inbox.py",
    "status.py",
    "memory.py",
    "power.py",
    "thermal.py",
    "threads.py",
    "bench.py",
    "litert_runner.py",
)
PACKAGE_DIR = REPO_ROOT / "android_runner"
PROTOCOL_PREFIX = "EDGEFARM "
GLOG_ERROR = re.compile(r"^[EF]\d{4} ")  # glog ERROR/FATAL lines; the status continues on the next lines
INIT_ALLOWANCE_S = 600.0
SERVE_LIFE_S = 30 * 86400.0  # `edgefarm serve`: the longest a serving runner lives before it is restarted
# The run stamp's runtime facts: the runner reports them in its READY (or FATAL) line, as its
# interpreter sees them (`runtime_identity` in litert_runner.py), so no probe process runs before.
RUNTIME_KEYS = ("runtime_version", "runtime_lib", "runtime_sha256")


@contextlib.contextmanager
def runner_tree() -> Iterator[Path]:
    """The runner as a device keeps it in WORKDIR/runner (android_runner/<RUNNER_FILES>, entry.py), copied
    into a temp folder: pushed as one tree, a board checks and receives it in one hash call and one copy
    (a push per file cost a `sha256sum` and a `mkdir` round trip each: 17 files, ~2-7 s of every run's
    staging over SSH)."""
    with tempfile.TemporaryDirectory(prefix="edgefarm-runner-") as tmp:
        tree = Path(tmp)
        (tree / "android_runner").mkdir()
        for f in RUNNER_FILES:
            shutil.copyfile(PACKAGE_DIR / f, tree / "android_runner" / f)
        shutil.copyfile(PACKAGE_DIR / "entry.py", tree / "entry.py")
        yield tree


def with_energy(r: SampleResult) -> SampleResult:
    """The row's figures derived on the host: energy from the board's raw power record (units decided
    here), and the TTFT phases from the runtime's own figures."""
    if r.ttft_phases_ms is None and r.turns:
        first = prefill_ms(r.turns[0].prefill_tokens, r.turns[0].prefill_tps)
        r = replace(r, ttft_phases_ms=ttft_phases(r.ttft_ms, first))
    if r.power is None or r.energy_j is not None:
        return r
    return replace(r, **energy_fields(r.power, r.decode_tokens))


def runtime_error_excerpt(lines: list[str], max_lines: int = 12) -> str:
    """The runtime's last ERROR/FATAL log entry with its continuation lines, else the log's last lines."""
    starts = [i for i, ln in enumerate(lines) if GLOG_ERROR.match(ln)]
    chosen = lines[starts[-1] : starts[-1] + max_lines] if starts else lines[-max_lines:]
    return "\n".join(chosen)


class RunnerStream:
    """Reads one runner process's protocol lines (READY, FATAL, BEGIN, RESULT) into events.

    `identity` is the run stamp (Staged.runner): READY and FATAL carry the runtime's facts, filled
    into it in place, so whoever holds the stamp sees them once the runner has started.
    """

    def __init__(
        self,
        results: dict[str, SampleResult],
        events: RunnerEvents,
        identity: MutableMapping[str, object] | None = None,
    ) -> None:
        self.results = results
        self.events = events
        self.identity = identity
        self.ready = False
        self.fatal: str | None = None
        self.fatal_kind = ""  # the runtime's failure kind at engine creation (android_runner/backend.py)
        self.fatal_detail = ""  # and its words
        self.in_flight: str | None = None

    def _stamp(self, info: dict) -> None:
        if self.identity is not None:
            self.identity.update({k: info[k] for k in RUNTIME_KEYS if isinstance(info.get(k), str)})
            if isinstance(info.get("settings"), dict):  # what the runner gave the runtime (READY)
                self.identity["applied_settings"] = info["settings"]

    def on_line(self, line: str) -> None:
        if not line.startswith(PROTOCOL_PREFIX):
            return
        kind, _, payload = line[len(PROTOCOL_PREFIX) :].partition(" ")
        try:
            data = json.loads(payload) if payload else None
        except ValueError:
            return
        if kind == "READY":
            self.ready = True
            info = data if isinstance(data, dict) else {}
            self._stamp(info)
            self.events.ready(info.get("init_ms"))
            self.events.note(
                f"runner ready in {info.get('init_ms', 0):.0f} ms with "
                f"{info.get('pending', '?')} sample(s) to run"
            )
        elif kind == "NOTE":
            self.events.note(str(data))
        elif kind == "FATAL" and isinstance(data, dict):
            self._stamp(data)
            self.fatal = data.get("error", "")
            self.fatal_kind = str(data.get("kind") or "")
            self.fatal_detail = str(data.get("detail") or "")
        elif kind == "BEGIN":
            self.in_flight = data
            self.events.begin(str(data))
        elif kind == "PIECE" and isinstance(data, dict):  # `edgefarm serve`: a piece of the answer
            self.events.piece(str(data.get("id", "")), str(data.get("text", "")))
        elif kind == "RESULT" and isinstance(data, dict):
            r = with_energy(SampleResult.from_dict(data))
            self.results[r.id] = r
            self.in_flight = None
            self.events.result(r)


class PythonRunner:
    name = "python"

    def __init__(self, python: str) -> None:
        self.python = python

    def checks(self, info: DeviceInfo, need: Need, env: Mapping[str, str]) -> tuple[Check, ...]:
        """Boards and this host: a device whose info answered has its runtime (`info()` raises NeedsSetup
        without litert_lm); its memory is checked against the token limit when staging."""
        version = info.extra.get("litert_lm_version") or "(version not reported)"
        return (Check("runtime", True, f"litert_lm {version}"),)

    def stage(self, device: Device, bundle: Path, model: ModelSummary, opts: RunOptions) -> Staged:
        root = PurePosixPath(str(device.workdir))
        reason = self._memory_refusal(device, model, opts)
        if reason:
            raise DeviceError(f"skipped: {reason}", where=device.name,
                              fix="free memory on the board or choose a smaller model / token limit")  # fmt: skip
        model_remote = self._model_remote(device, model)
        model_push, other = self._push_engine(device, model, model_remote)
        job = self._job_dir(device, opts)
        other += device.push(bundle / "job.jsonl", job / "job.jsonl")
        # the run's settings (always written: a resumed run never inherits an old run's settings)
        settings = opts.runner_settings(model=model_remote, cache=root / "cache" / model_remote.parent.name,
                                        vision=model.vision, audio=model.audio)  # fmt: skip
        with tempfile.TemporaryDirectory() as tmp:
            local = Path(tmp) / SETTINGS_FILE
            local.write_text(settings.render(), encoding="utf-8")
            other += device.push(local, job / SETTINGS_FILE)
        if (bundle / "media").is_dir():
            other += device.push(bundle / "media", job / "media")
        return Staged(
            root=root,
            model=model_remote,
            job=job,
            model_push=model_push,
            other_push=other,
            runner=self._identity(),
        )

    @staticmethod
    def _job_dir(device: Device, opts: RunOptions) -> PurePosixPath:
        """The device's own job folder: several devices may share one work folder (every `kind: local`
        device of a run uses this host's), and the job folder holds the runner's runner.pid, which a
        runner starting on the same folder stops as stale."""
        return PurePosixPath(str(device.workdir)) / "runs" / opts.run_id / device.name / "job"

    @staticmethod
    def _memory_refusal(device: Device, model: ModelSummary, opts: RunOptions) -> str:
        """Why the model cannot fit (its predicted memory floor vs the device's RAM), before a
        multi-GB push; '' when it can."""
        if model.facts is None:
            return ""
        floor = model.facts.floor_bytes(opts.max_num_tokens or model.max_context_tokens)
        return memory_refusal(device.info().ram_mb, floor) or ""

    @staticmethod
    def _model_remote(device: Device, model: ModelSummary) -> PurePosixPath:
        return PurePosixPath(str(device.workdir)) / "models" / model.sha256[:16] / model.path.name

    @staticmethod
    def _push_engine(
        device: Device, model: ModelSummary, model_remote: PurePosixPath
    ) -> tuple[PushStats, PushStats]:
        """What the engine needs on the device: the model and the runner's files."""
        model_push = device.push(model.path, model_remote)
        with runner_tree() as tree:
            other = device.push(tree, PurePosixPath(str(device.workdir)) / "runner")
        return model_push, other

    def _identity(self) -> dict[str, str]:
        """The run stamp: the runner's hash (as the board's `info` computes it over its runner folder);
        the runtime's version, library and its sha256 stay '' until the runner's READY fills them."""
        files = {f"./android_runner/{f}": (PACKAGE_DIR / f).read_bytes() for f in RUNNER_FILES}
        files["./entry.py"] = (PACKAGE_DIR / "entry.py").read_bytes()
        return {
            "runner": "python",
            "runner_sha256": runner_sha256(files),
            "runtime": "litert-lm-api",
            **dict.fromkeys(RUNTIME_KEYS, ""),
            "python": self.python,
        }

    def serve(self, device: Device, staged: Staged, opts: RunOptions, events: RunnerEvents,
              requests: StdinRequests) -> Exit:  # fmt: skip
        """`edgefarm serve`: the runner loaded until `events.stop`, running the requests written to its
        stdin (`requests`, android_runner/inbox.py); its lines become `events` as in a run."""
        stream = RunnerStream({}, events, staged.runner if isinstance(staged.runner, MutableMapping) else None)
        argv = [*self._argv(staged), "--serve"]
        ex = device.run(argv, timeout_s=SERVE_LIFE_S, on_line=stream.on_line, cancel=events.stop,
                        feed=requests.feed)  # fmt: skip
        if not stream.ready and not events.stop.is_set():
            self._not_ready(device, staged, ex, stream, opts)
        return ex

    @staticmethod
    def serve_requests(device: Device, staged: Staged, scratch: Path) -> StdinRequests:
        """How the serving runner gets its requests: lines on its stdin (runners/serve_link.py)."""
        return StdinRequests(device, staged.job)

    def _argv(self, staged: Staged, block_start: bool = False) -> list[str]:
        """The runner's command line: its job folder only; the run's settings are that folder's `settings`
        file (android_runner/settings.py), written at staging. `--block-start` on the block's first start
        (the settle gate runs there, not again after a restart)."""
        entry = staged.root / "runner" / "entry.py"
        return [self.python, str(entry), "--job", str(staged.job), "--exit-on-stdin-eof",
                *(["--block-start"] if block_start else [])]  # fmt: skip

    def _run_runner(
        self,
        device: Device,
        staged: Staged,
        timeout_s: float,
        events: RunnerEvents,
        on_line: LineSink,
        block_start: bool = False,
    ) -> Exit:
        """Run the runner to its end."""
        return device.run(self._argv(staged, block_start), timeout_s=timeout_s, on_line=on_line, cancel=events.stop)

    @staticmethod
    def _pull_text(device: Device, remote: PurePosixPath) -> str | None:
        """A device file's text, or None when it is not there (yet)."""
        with tempfile.TemporaryDirectory() as tmp:
            local = Path(tmp) / remote.name
            try:
                device.pull(remote, local)
            except DeviceError:
                return None
            return local.read_text(encoding="utf-8", errors="replace")

    def _device_results(self, device: Device, staged: Staged) -> dict[str, SampleResult]:
        text = self._pull_text(device, staged.job / "results.jsonl") or ""
        return {r.id: with_energy(r) for r in parse_results(text.splitlines())}

    def _write_device_results(self, device: Device, staged: Staged, results: dict[str, SampleResult]) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            local = Path(tmp) / "results.jsonl"
            local.write_text("".join(r.to_json() + "\n" for r in results.values()), encoding="utf-8")
            device.push(local, staged.job / "results.jsonl")

    def _log_tail(self, device: Device, staged: Staged) -> str:
        text = self._pull_text(device, staged.job / "runner.log") or ""
        return runtime_error_excerpt([ln for ln in text.splitlines() if ln.strip()])

    def _not_ready(
        self, device: Device, staged: Staged, ex: Exit, state: RunnerStream, opts: RunOptions
    ) -> NoReturn:
        """A runner that stopped before its model was ready (a run's, a serve's): the backend the device
        lacks (BackendUnavailable), a model that cannot load, else the device's error; the runtime's words."""
        tail = self._log_tail(device, staged) or ex.output_tail.strip()
        kind, words = state.fatal_kind, state.fatal_detail
        if not kind:  # a runner started before its job logs to us: classify what it said here
            kind, words = engine_failure(f"{ex.output_tail}\n{tail}", opts.backend, state.fatal or "")
        if ex.code == BACKEND_UNAVAILABLE_EXIT or kind in BACKEND_UNAVAILABLE_KINDS:
            # the backend asked, not the model: its own message and exit code
            where = f"{device.name} (model {staged.model})"
            raise backend_unavailable(opts.backend, kind, words or tail, where)
        how = f"signal {ex.signal}" if ex.signal else f"exit code {ex.code}"
        unloadable = ex.signal == signal.SIGABRT or ex.code == MODEL_UNLOADABLE_EXIT
        kind = ModelError if unloadable else DeviceError
        what = (
            f"the model could not be loaded ({state.fatal})"
            if state.fatal
            else f"the runner died before the model was ready ({how})"
        )
        raise kind(
            what + (f"; runtime said:\n{tail}" if tail else ""),
            where=f"{device.name} (model {staged.model})",
            fix="check that the model file is a complete, valid .litertlm for this runtime "
            "(run `litert-lm-peek` on it, or rebuild/re-download it)",
        )

    def execute(
        self, device: Device, staged: Staged, items: Sequence[JobItem], opts: RunOptions, events: RunnerEvents
    ) -> list[SampleResult]:
        order = [it.id for it in items]
        results = self._device_results(device, staged)
        for r in results.values():
            events.result(r)
        starts = 0
        while any(i not in results for i in order) and not events.stop.is_set():
            stamp = staged.runner if isinstance(staged.runner, MutableMapping) else None
            state = RunnerStream(results, events, stamp)
            on_line = state.on_line
            left = sum(1 for i in order if i not in results)
            deadline = INIT_ALLOWANCE_S + left * (opts.sample_timeout_s + opts.cooldown_wait_s + 5.0)
            deadline += opts.settle_wait_s if not starts else 0.0
            ex = self._run_runner(device, staged, deadline, events, on_line, block_start=not starts)
            starts += 1
            if ex.cancelled or events.stop.is_set():
                self.stop(device, staged)
                results.update(self._device_results(device, staged))
                break
            if ex.code == 0:
                missing = [i for i in order if i not in results]
                if missing:  # the runner finished but we lost lines: the device file is the truth
                    results.update(self._device_results(device, staged))
                break
            if not state.ready:
                self._not_ready(device, staged, ex, state, opts)
            if ex.code == TIMEOUT_EXIT:
                results.update(self._device_results(device, staged))
                continue
            victim = state.in_flight
            if ex.timed_out or victim is None:
                raise DeviceError(
                    f"the runner stopped unexpectedly ({'run deadline passed' if ex.timed_out else ex})",
                    where=device.name,
                    fix="see runner.log in the device folder; rerun with --resume",
                )
            how = f"signal {ex.signal}" if ex.signal else f"exit code {ex.code}"
            tail = self._log_tail(device, staged)
            dead = SampleResult(
                id=str(victim),
                status=classify(ex.code, ex.signal) if ex.signal else Status.CRASH,
                error=f"runner died during this sample ({how})" + (f":\n{tail}" if tail else ""),
                exit_code=ex.code,
                signal=ex.signal,
                backend=opts.backend,
                threads=opts.threads,
            )
            merged = self._device_results(device, staged)
            merged[dead.id] = dead
            self._write_device_results(device, staged, merged)
            results.update(merged)
            events.result(dead)
            events.note(f"runner restarted after {how} on sample {victim}")
        return [results[i] for i in order if i in results]

    def stop(self, device: Device, staged: Staged) -> None:
        """Stop a runner of this job still alive on the device (the runner's own --stop mode)."""
        argv = [self.python, str(staged.root / "runner" / "entry.py"), "--job", str(staged.job), "--stop"]
        device.run(argv, timeout_s=30)

    def collect(self, device: Device, staged: Staged, out_dir: Path) -> None:
        out_dir.mkdir(parents=True, exist_ok=True)
        for name in ("results.jsonl", "runner.log"):
            try:
                device.pull(staged.job / name, out_dir / name)
            except DeviceError:
                pass
