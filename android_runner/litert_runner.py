"""The on-device Python runner (Linux boards and this host) on the `litert_lm` runtime.

    python3 entry.py --job DIR [--results FILE]

The run's settings (model, backend, threads, token limit, sample timeout, cooldown gate) are DIR/settings,
the file every runner reads (android_runner/settings.py).

Loads the engine ONCE, runs every sample of DIR/job.jsonl not yet in the results file in a fresh
conversation (turns in order, media as files), appends one SampleResult line per sample and
flushes it. Progress goes to stdout as protocol lines the host streams:

    EDGEFARM READY {"init_ms": ..., "runtime_version": ..., "runtime_lib": ..., "runtime_sha256": ...}
    EDGEFARM BEGIN "<id as JSON>"
    EDGEFARM RESULT {<SampleResult JSON>}

The runtime's own log goes to stderr, which is redirected to `runner.log` in the job folder so the
real error behind a generic RuntimeError can be quoted in the result. A broken model aborts the
whole process (SIGABRT): the host, which started us as a child, turns that into a device error.

Size: over 400 lines on purpose: this is the one loop of one process (engine, conversation,
watchdog, memory and thermal readings around each sample) copied to every board; what it shares with
the host and the native runner is in its stdlib neighbours (contract, status, conversation, memory,
answer_text, backend).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from .answer_text import clean_answer
from .backend import (
    BACKEND_UNAVAILABLE_KINDS,
    BackendVerdict,
    classify_backend,
    engine_failure,
    split_lines,
)
from .bench import BenchRunner, bench_order
from .contract import JobItem, SampleResult, Settle, TurnFigures, read_results
from .conversation import render, reply_text, unsupported_reason
from .fidelity import score_fidelity
from .inbox import Inbox
from .memory import MemorySampler, sample_peaks_mb
from .power import PowerSampler, find_power_reader
from .runtime_pin import RUNTIME_DIST, RUNTIME_LIB
from .settings import SETTINGS_FILE, RunnerSettings, SettingsError
from .status import (
    BACKEND_UNAVAILABLE_EXIT,
    MODEL_UNLOADABLE_EXIT,
    TIMEOUT_EXIT,
    Status,
)
from .thermal import cool_down, settle, thermal_snapshot, with_clocks
from .threads import EngineThreads, thread_ids

PROTOCOL_PREFIX = "EDGEFARM"


def emit(kind: str, payload: Any) -> None:
    sys.stdout.write(f"{PROTOCOL_PREFIX} {kind} {json.dumps(payload, ensure_ascii=False)}\n")
    sys.stdout.flush()


def _dist_info(dist: str) -> Path | None:
    """The installed `dist`'s .dist-info folder, looked up on sys.path as importlib.metadata does (the
    folder name's escaped, lower-cased project name). Read directly: importing importlib.metadata
    (email, zipfile, csv, ...) took 12 ms of the runner's start, which the first sample waits on."""
    prefix = dist.replace("-", "_").replace(".", "_").lower() + "-"
    for entry in sys.path:
        folder = Path(entry or ".")
        with contextlib.suppress(OSError):
            for name in os.listdir(folder):
                if name.endswith(".dist-info") and name.lower().startswith(prefix):
                    return folder / name
    return None


def runtime_identity(dist: str = RUNTIME_DIST) -> dict[str, str]:
    """The runtime's version, and its liblitert-lm.so with the sha256 the wheel's RECORD lists for it
    (exact as installed, and no 130 MB read on a slow board), for the run stamp. Sent in READY, so the
    host needs no probe process or SSH round trip of its own. '' for what is not known."""
    version, path, digest = "", "", ""
    info = _dist_info(dist)
    with contextlib.suppress(OSError, ValueError):  # a missing or odd install leaves the stamp (partly) empty
        if info is not None:
            with open(info / "METADATA", encoding="utf-8") as f:
                version = next((ln[8:].strip() for ln in f if ln.startswith("Version:")), "")
            import csv  # RECORD rows: path,hash,size (PEP 376), paths relative to the dist-info's parent

            with open(info / "RECORD", encoding="utf-8", newline="") as f:
                row = next((r for r in csv.reader(f) if r and r[0].rsplit("/", 1)[-1] == RUNTIME_LIB), None)
            if row is not None:
                path = os.path.normpath(info.parent / row[0])
                algo, _, value = row[1].partition("=") if len(row) > 1 else ("", "", "")
                if algo == "sha256" and value:  # urlsafe base64 without padding
                    digest = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).hex()
    return {"runtime_version": version, "runtime_lib": path, "runtime_sha256": digest}


def _spec_tool(lm, spec: Mapping[str, Any]):
    """A rendered tool spec as a runtime Tool: the package serialises `get_tool_description()` with
    `json.dumps`, so the runtime gets the same tools JSON as the native runner. Never executed."""

    class SpecTool(lm.Tool):
        def get_tool_description(self) -> dict[str, Any]:
            return dict(spec)

        def execute(self, param: Mapping[str, Any]) -> Any:  # automatic_tool_calling=False: unused
            return {}

    return SpecTool()


class StderrLog:
    """fd 2 redirected to a file, so the runtime's real status can be quoted per sample."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)  # kept: fstat per sample
        os.dup2(self._fd, 2)

    def offset(self) -> int:
        try:
            return os.fstat(self._fd).st_size
        except OSError:
            return 0

    def since(self, offset: int, max_chars: int = 800) -> str:
        try:
            with open(self.path, "rb") as f:
                f.seek(offset)
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return ""
        lines = [ln for ln in text.splitlines() if ln.strip()]
        return "\n".join(lines)[-max_chars:]


def _round(x: float | None, nd: int = 3) -> float | None:
    return None if x is None else round(float(x), nd)


class LiteRtRunner:
    """One engine, many samples."""

    def __init__(
        self,
        model: str,
        backend: str,
        threads: int | None,
        cache_dir: str,
        max_num_tokens: int | None,
        modalities: frozenset[str] | None = None,
    ) -> None:
        """`modalities` (the host's reading of the model, e.g. {"text", "image"}): which encoders to
        load; None reads them with ModelInfo, which costs a second parse of the model (50-90 ms for
        the tiny one on this host) before the engine's own."""
        import litert_lm  # imported here so `--help` and contract users need no runtime

        self.lm = litert_lm
        self.media_root = ""  # the job folder (bind_job): media paths in messages are absolute under it
        self.identity: dict[str, str] = {}  # the runtime's facts for the run stamp (load_engine)
        self.power: PowerSampler | None = None  # set by main() when the board has a power sensor
        # `--serve`: a streamed request's last turn goes piece by piece to this (id, text) -> False stops
        # it (the client went away); None, or a request not streamed: the answer comes whole, as in a run
        self.pieces: Callable[[str, str], bool] | None = None
        self.backend_name = backend
        # what really ran, from the runtime's own log around engine creation (load_engine)
        self.verdict = BackendVerdict(requested=backend, ran=backend)
        self.threads = threads
        if modalities is not None:
            self.vision, self.audio = "image" in modalities, "audio" in modalities
        else:
            with litert_lm.ModelInfo(model) as info:
                self.vision = bool(info.input_modalities.vision)
                self.audio = bool(info.input_modalities.audio)
        backend_obj = self._backend(backend, threads)
        t0 = time.perf_counter()
        before = thread_ids()
        self.engine = litert_lm.Engine(
            model,
            backend=backend_obj,
            max_num_tokens=max_num_tokens,
            cache_dir=cache_dir,
            vision_backend=litert_lm.Backend.CPU() if self.vision else None,
            audio_backend=litert_lm.Backend.CPU() if self.audio else None,
            enable_benchmark=True,
        )
        self.init_ms = (time.perf_counter() - t0) * 1000.0
        # the CPU threads the engine runs with (threads.py), counted for a text model (an encoder's own
        # pool would be counted with it, so a model with one takes the rule)
        created = thread_ids() if not (self.vision or self.audio) else None
        self.threads_seen = EngineThreads(threads, before, created) if backend == "cpu" else None

    def _threads_ran(self) -> dict[str, Any]:
        """A row's threads_ran/threads_from: the engine's pool as it stands now (threads.py)."""
        if self.threads_seen is None:
            return {}
        ran = self.threads_seen.ran()
        return {"threads_ran": ran.count, "threads_from": ran.source}

    def bind_job(self, job_dir: Path) -> None:
        """The job this engine runs: media paths in its messages are under this folder."""
        self.media_root = str(job_dir.resolve())

    def _backend(self, name: str, threads: int | None):
        B = self.lm.Backend
        if name == "cpu":
            return B.CPU(thread_count=threads) if threads else B.CPU()
        if name == "gpu":
            return B.GPU()
        if name == "npu":
            return B.NPU()
        raise SystemExit(f"unknown backend {name!r} (use cpu, gpu or npu)")

    def run(self, item: JobItem, memory: MemorySampler, log: StderrLog) -> SampleResult:
        row: dict[str, Any] = {  # the fields every outcome has; the result is built once, at the end
            "id": item.id,
            "status": Status.OK,
            "init_ms": _round(self.init_ms),
            "backend": "",  # set in _finish when the runtime answered
            "backend_requested": self.backend_name,
            "threads": self.threads,
            **self._threads_ran(),
            "runner": RUNNER_KIND,
            "max_output_tokens": item.max_output_tokens,
            "thermal_before": with_clocks(thermal_snapshot()),
        }
        if item.refused:
            return SampleResult(**{**row, "status": Status.ERROR, "error": item.refused})
        reason = unsupported_reason(item, vision=self.vision, audio=self.audio)
        if reason:
            return SampleResult(**{**row, "status": Status.UNSUPPORTED, "error": reason})
        lm = self.lm
        conversation = render(item, self.media_root)
        memory.reset()
        if self.power is not None:
            self.power.reset()
        log_at = log.offset()
        t_start = time.perf_counter()
        turns: list[TurnFigures] = []
        ttft_ms = None
        infer_s = 0.0
        text = ""
        try:
            s = conversation.sampler
            tools = json.loads(conversation.tools_json) if conversation.tools_json else []
            conv = self.engine.create_conversation(
                messages=json.loads(conversation.history_json) if conversation.history_json else None,
                system_message=conversation.system_message,
                tools=[_spec_tool(lm, t) for t in tools] or None,
                automatic_tool_calling=False,
                sampler_config=lm.SamplerConfig(
                    top_k=s.top_k, top_p=s.top_p, temperature=s.temperature, seed=s.seed
                ),
                max_output_tokens=conversation.max_output_tokens,
            )
            with conv:
                for i, message in enumerate(conversation.messages):
                    t0 = time.perf_counter()
                    if self.pieces is not None and item.stream and i == len(conversation.messages) - 1:
                        text, stopped = self._streamed(conv, item.id, json.loads(message))
                        if stopped:
                            row.update(status=Status.ERROR, error=f"cancelled: {stopped}")
                    else:
                        text = reply_text(conv.send_message(json.loads(message)).to_json())
                    wall_s = time.perf_counter() - t0
                    infer_s += wall_s
                    bench = conv.get_benchmark_info()
                    if i == 0:
                        ttft_ms = bench.time_to_first_token_in_second * 1000.0
                    turns.append(
                        TurnFigures(
                            prefill_tokens=bench.last_prefill_token_count,
                            prefill_tps=_round(bench.last_prefill_tokens_per_second, 2),
                            decode_tokens=bench.last_decode_token_count,
                            decode_tps=_round(bench.last_decode_tokens_per_second, 2),
                            wall_ms=_round(wall_s * 1000.0),
                        )
                    )
        except Exception as e:  # noqa: BLE001 - the runtime raises generic errors; its real status is on stderr
            detail = log.since(log_at)
            err = f"{type(e).__name__}: {e}"
            if detail:
                err += f"\n{detail}"
            row.update(status=Status.ERROR, error=err)
        if item.fidelity is not None and row["status"] == Status.OK:  # --fidelity: one more pass, same engine
            row["fidelity"] = score_fidelity(self.engine, item.fidelity, text, log, log_at)
        if row["status"] == Status.OK and log.offset() > log_at:  # the runtime said something: read it
            said = classify_backend(
                [ln.text for ln in split_lines(log.since(log_at, 1 << 16))], self.backend_name, True
            )
            self.verdict = self.verdict.merged(said)  # e.g. the GPU sampler is created with the first session
        return self._finish(row, text, turns, ttft_ms, infer_s, t_start, memory)

    def _streamed(self, conv, item_id: str, message: Mapping[str, Any]) -> tuple[str, str]:
        """`--serve`: the turn's answer as it comes, each piece to `self.pieces`; (answer, why it was
        stopped or ''). The same engine call as send_message, in the runtime's streaming form."""
        text, stopped = "", ""
        for chunk in conv.send_message_async(message):  # after a cancel: drained to the runtime's end
            if stopped:
                continue
            piece = reply_text(chunk.to_json())
            text += piece
            if piece and self.pieces is not None and not self.pieces(item_id, piece):
                conv.cancel_process()
                stopped = "the client went away"
        return text, stopped

    def _finish(self, row: dict[str, Any], text, turns, ttft_ms, infer_s, t_start, memory) -> SampleResult:
        peaks = memory.peaks()
        last = turns[-1] if turns else None
        v = self.verdict
        if row["status"] == Status.OK:
            row["backend"] = v.ran
            if v.fell_back:  # asked GPU/NPU, answered on the CPU: not a row of the backend asked
                row.update(status=Status.ERROR, error=f"backend_fallback: {v.evidence}")
            elif v.flags:  # ran as asked, a part fell back: flagged in the runtime's words
                row["error"] = f"warning: {', '.join(v.flags)}: {v.evidence}"
        text, invalid_utf8, dropped = clean_answer(text)  # the same rule as the native runner's
        return SampleResult(
            output=text,
            invalid_utf8_bytes=invalid_utf8,
            output_truncated_bytes=dropped,
            ttft_ms=_round(ttft_ms),
            prefill_tokens=sum(t.prefill_tokens or 0 for t in turns) if turns else None,
            prefill_tps=last.prefill_tps if last else None,
            decode_tokens=sum(t.decode_tokens or 0 for t in turns) if turns else None,
            decode_tps=last.decode_tps if last else None,
            infer_ms=_round(infer_s * 1000.0) if turns else None,
            wall_ms=_round((time.perf_counter() - t_start) * 1000.0),
            **sample_peaks_mb(peaks, memory.peak_method),
            peak_method=memory.peak_method,
            mem_sample_ms=memory.interval_ms,
            turns=tuple(turns),
            power=self.power.reading() if self.power is not None else None,
            thermal_after=with_clocks(thermal_snapshot()),
            **row,
        )


class Watchdog:
    """A runtime call cannot be interrupted from Python: a sample past its deadline is recorded as a
    timeout and the process exits 124 (the host restarts the runner for the samples left).

    ONE thread for the whole run, armed per sample with a deadline (a thread per sample cost more than
    the rest of the runner's bookkeeping). It sleeps until the deadline of the sample armed when it
    last looked; deadlines only move later, so `arm` wakes it only when it idles with none. Whoever
    claims the sample first under the lock records it, never both: the watchdog (timeout) or the
    main loop (`disarm` returned True).
    """

    EXIT_CODE = TIMEOUT_EXIT

    def __init__(
        self,
        timeout_s: float,
        record: Callable[[SampleResult], None],
        memory: MemorySampler,
        exit_process: Callable[[int], Any] = os._exit,
    ) -> None:
        self._timeout_s = timeout_s
        self._record = record
        self._memory = memory
        self._exit = exit_process  # os._exit in a run; a test's stand-in returns
        self._cond = threading.Condition(threading.Lock())
        self._armed: tuple[str, float] | None = None  # (sample id, monotonic deadline)
        self._idle = False
        self._fired = False
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name="watchdog", daemon=True)
        self._thread.start()

    def arm(self, sample_id: str) -> None:
        """The sample starts now: it has timeout_s."""
        with self._cond:
            self._armed = (sample_id, time.monotonic() + self._timeout_s)
            if self._idle:
                self._cond.notify()

    def disarm(self) -> bool:
        """True when the sample finished in time: its result is the caller's to record. False when the
        watchdog claimed it: then this waits for the watchdog, which records it and exits."""
        with self._cond:
            if not self._fired:
                self._armed = None
                return True
        self._thread.join()
        return False

    def close(self) -> None:
        """End the thread (the run is over; nothing is armed)."""
        with self._cond:
            self._closed = True
            self._cond.notify()

    def _loop(self) -> None:
        with self._cond:
            while True:
                if self._closed:
                    return
                if self._armed is None:
                    self._idle = True
                    self._cond.wait()
                    self._idle = False
                    continue
                sample_id, deadline = self._armed
                left = deadline - time.monotonic()
                if left <= 0:
                    self._fired = True  # claimed: the main loop's disarm() now returns False
                    break
                self._cond.wait(left)
        self._expire(sample_id)

    def _expire(self, sample_id: str) -> None:
        try:
            peaks = self._memory.peaks()
            self._record(
                SampleResult(
                    id=sample_id,
                    status=Status.TIMEOUT,
                    error=f"no answer within {self._timeout_s:g} s (sample timeout)",
                    exit_code=self.EXIT_CODE,
                    **sample_peaks_mb(peaks, self._memory.peak_method),
                    peak_method=self._memory.peak_method,
                    mem_sample_ms=self._memory.interval_ms,
                    runner=RUNNER_KIND,
                )
            )
        finally:
            self._exit(self.EXIT_CODE)


RUNNER_KIND = "python"  # SampleResult.runner
PID_FILE = "runner.pid"
STOPPED_EXIT = 143  # stopped because edgefarm went away (128 + SIGTERM, as a shell would report it)


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def stop_earlier_runner(job_dir: Path) -> int | None:
    """Kill a runner of this same job that is still alive (an edgefarm killed mid-run left it), and
    wait until it is gone, so a resume never runs a sample twice at once. Returns its pid.

    runner.pid holds the runner's pid and its start time (/proc/PID/stat): a live process with both
    is that runner, whatever its command line says."""
    try:
        words = (job_dir / PID_FILE).read_text().split()
        pid = int(words[0])
    except (OSError, ValueError, IndexError):
        return None
    if pid == os.getpid() or "entry.py" not in _cmdline(pid):
        return None  # gone, or the pid was reused by something else
    if words[1:2] != [_stat_field(pid, STARTTIME_FIELD)] and str(job_dir) not in _cmdline(pid):
        return None  # another process that reuses the pid (or a pid file without a start time)
    try:
        os.kill(pid, 9)
    except OSError:
        return None
    for _ in range(200):
        if not os.path.exists(f"/proc/{pid}") or _stat_field(pid, STATE_FIELD) == "Z":
            break
        time.sleep(0.025)
    return pid


STATE_FIELD, STARTTIME_FIELD = 3, 22  # fields of /proc/PID/stat, counted from 1 as in proc(5)


def _stat_field(pid: int | str, field: int) -> str:
    """A field of /proc/PID/stat ('' when the process is gone); the fields after the command name."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[-1].split()[field - 3]
    except (OSError, IndexError):
        return ""


def write_pid_file(job_dir: Path) -> None:
    (job_dir / PID_FILE).write_text(
        f"{os.getpid()} {_stat_field('self', STARTTIME_FIELD)}\n", encoding="utf-8"
    )


def exit_when_stdin_closes() -> None:
    """The host keeps our stdin open and never writes: EOF means edgefarm (or the SSH connection)
    is gone, so stop at once instead of running on unowned."""
    import threading

    def watch() -> None:
        try:  # the raw fd: a daemon thread inside sys.stdin's buffer aborts interpreter shutdown
            while os.read(0, 4096):
                pass
        except OSError:
            pass
        os._exit(STOPPED_EXIT)

    threading.Thread(target=watch, name="stdin-watch", daemon=True).start()


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="edgefarm-runner", description=__doc__.splitlines()[0])
    ap.add_argument(
        "--job", help=f"job bundle folder holding job.jsonl and {SETTINGS_FILE} (the run's settings)"
    )
    ap.add_argument("--results", help="results.jsonl to append to (default: JOB/results.jsonl)")
    ap.add_argument("--sample-interval-ms", type=float, default=5.0)
    ap.add_argument("--exit-on-stdin-eof", action="store_true", help="exit when stdin closes (host gone)")
    ap.add_argument("--stop", action="store_true", help="only stop a runner of this job that is still alive")
    ap.add_argument("--serve", action="store_true",
                    help="`edgefarm serve`: stay loaded and run the requests written to stdin (inbox.py)")  # fmt: skip
    ap.add_argument("--block-start", action="store_true",
                    help="the block's first start: the settings' settle gate runs before its first sample")  # fmt: skip
    return ap


def load_engine(settings: RunnerSettings, log: StderrLog) -> LiteRtRunner | int:
    """The engine, or FATAL emitted (with the runtime's facts and its log) and the exit code.

    The runtime writes its log to fd 2, which is runner.log: what it said while the engine was
    created decides the backend that really runs (android_runner/backend.py), and a failure to get
    the backend asked is BACKEND_UNAVAILABLE_EXIT with the runtime's words, not a broken model.
    """
    identity = runtime_identity()  # the run stamp's runtime facts, for the host (READY, or FATAL)
    start = log.offset()
    try:
        modalities = frozenset(
            ["text"]
            + (["image"] if settings.vision_backend else [])
            + (["audio"] if settings.audio_backend else [])
        )
        runner = LiteRtRunner(settings.model, settings.backend, settings.threads or None, settings.cache_dir,
                              settings.max_num_tokens or None, modalities)  # fmt: skip
    except Exception as e:  # noqa: BLE001 - the runtime's reason is in its log, not in the exception
        words = log.since(start, max_chars=1 << 16)
        kind, detail = engine_failure(words, settings.backend, str(e))
        emit("FATAL", {"error": f"{type(e).__name__}: {e}", "detail": detail, "kind": kind, **identity})
        return BACKEND_UNAVAILABLE_EXIT if kind in BACKEND_UNAVAILABLE_KINDS else MODEL_UNLOADABLE_EXIT
    words = log.since(start, max_chars=1 << 16)
    runner.verdict = classify_backend([ln.text for ln in split_lines(words)], settings.backend, answered=True)
    runner.identity = identity
    return runner


def main(argv: list[str] | None = None) -> int:
    ap = _parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = ap.parse_args(argv)
    if not args.job:
        ap.error("--job is required")

    job_dir = Path(args.job).resolve()
    earlier = stop_earlier_runner(job_dir)
    if args.stop:
        emit("NOTE", f"stopped runner pid {earlier}" if earlier else "no runner of this job was running")
        return 0
    if args.exit_on_stdin_eof and not args.serve:  # serving, the inbox reads stdin (and ends at its end)
        exit_when_stdin_closes()
    write_pid_file(job_dir)
    try:  # the run's settings: the one file every runner reads (android_runner/settings.py)
        settings = RunnerSettings.parse(
            (job_dir / SETTINGS_FILE).read_text("utf-8"), str(job_dir / SETTINGS_FILE)
        )
    except (OSError, UnicodeDecodeError, SettingsError) as e:
        emit("FATAL", {"error": f"the job's settings file: {e}", "kind": "", "detail": ""})
        return 2
    results_path = Path(args.results) if args.results else job_dir / "results.jsonl"
    cache_dir = Path(settings.cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    log = StderrLog(job_dir / "runner.log")
    if earlier:
        emit("NOTE", f"stopped an earlier runner of this job (pid {earlier}) that was still running")

    inbox = None
    if args.serve:  # `edgefarm serve`: requests on stdin; its end is the host gone (stop at once)
        inbox = Inbox(job_dir, on_eof=lambda: os._exit(STOPPED_EXIT), on_note=lambda s: emit("NOTE", s))
    pending: list[JobItem] = []
    if inbox is None:
        done = {r.id for r in read_results(str(results_path))}
        with open(job_dir / "job.jsonl", encoding="utf-8") as f:
            items = [JobItem.from_json(line) for line in f if line.strip()]
        pending = [it for it in items if it.id not in done]

    runner: LiteRtRunner | BenchRunner
    if pending and all(it.bench for it in pending):  # `edgefarm bench`: a fresh engine per item
        runner = BenchRunner(settings.model, str(cache_dir), settings.max_num_tokens or None, RUNNER_KIND)
        pending = bench_order(pending)
        identity = runtime_identity()
        runner.on_load = lambda engine: emit(
            "READY", {"init_ms": round(engine.init_ms, 3), "pending": len(pending), **identity}
        )
    else:
        loaded = load_engine(settings, log)
        if isinstance(loaded, int):
            return loaded
        runner = loaded
        runner.bind_job(job_dir)
        if inbox is not None:  # a streamed request's answer goes piece by piece; a cancel mark stops it
            runner.pieces = lambda item_id, piece: (
                emit("PIECE", {"id": item_id, "text": piece}) or not inbox.cancelled(item_id)
            )
        emit(
            "READY",
            {
                "init_ms": round(runner.init_ms, 3),
                "vision": runner.vision,
                "audio": runner.audio,
                "pending": len(pending),
                "settings": settings.applied(),  # what the runtime was given
                **runner.identity,
            },
        )
    memory = MemorySampler(interval_s=args.sample_interval_ms / 1000.0)
    if not isinstance(runner, BenchRunner):  # a bench turn runs with no thread of ours beside it (memory.py)
        memory.start()
    found = find_power_reader()
    if found is not None:
        runner.power = PowerSampler(*found)
        runner.power.start()
    watchdog: Watchdog | None = None
    try:
        with open(results_path, "a", encoding="utf-8") as out:

            def record(result: SampleResult) -> None:
                line = result.to_json()
                out.write(line + "\n")
                out.flush()
                sys.stdout.write(f"{PROTOCOL_PREFIX} RESULT {line}\n")
                sys.stdout.flush()

            watchdog = Watchdog(settings.sample_timeout_s, record, memory)
            gate = settings.cooldown_c is not None
            settle_first = args.block_start and settings.settle_c is not None
            for item in pending if inbox is None else inbox.items(memory):
                emit("BEGIN", item.id)
                settled = None
                if settle_first:  # --settle: once, before the block's first sample
                    settle_first = False
                    settled = Settle.from_dict(settle(settings.settle_c, settings.settle_window_ms / 1000.0,
                                                      settings.settle_max_ms / 1000.0))  # fmt: skip
                    if settled.settled is None:
                        emit("NOTE", "warning: no temperature sensor readable here, --settle is not applied")
                    elif not settled.settled:
                        emit("NOTE", f"warning: temperatures still changing by {settled.span_c:g} C over "
                                     f"{settled.window_s:g} s after {settled.waited_s:.0f} s: measured unsettled")  # fmt: skip
                cooled = cool_down(settings.cooldown_c, settings.cooldown_max_s) if gate else None
                if gate and cooled is None:
                    emit("NOTE", "warning: no thermal sensor is readable here, --cooldown-c is not applied")
                    gate = False
                elif cooled is not None and not cooled[1]:
                    emit(
                        "NOTE",
                        f"warning: still above {settings.cooldown_c:g} C after {cooled[0]:.0f} s before {item.id}",
                    )
                watchdog.arm(item.id)
                result = runner.run(item, memory, log)
                if cooled is not None:
                    result = replace(result, cooldown_s=cooled[0])
                if settled is not None:
                    result = replace(result, settle=settled)
                if watchdog.disarm():
                    record(result)
                if inbox is not None:
                    inbox.done(item.id)
    finally:
        if watchdog is not None:
            watchdog.close()
        memory.stop()
        if runner.power is not None:
            runner.power.stop()
        if isinstance(runner, BenchRunner):
            runner.close()
    emit("DONE", {"samples": len(pending) if inbox is None else inbox.taken})
    return 0


if __name__ == "__main__":
    sys.exit(main())
