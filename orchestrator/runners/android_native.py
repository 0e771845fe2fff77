"""edgefarm's native phone runner (`driver.sh native`): its job file in, its result lines out.

The runner (android_runner/native/edgefarm_runner.c) loads the model ONCE and runs each sample in
a fresh conversation built from exactly the JSON that android_runner/conversation.py renders, the
same rendering the Python runner on boards and this host sends. It keys everything by the sample's
number n (1-based in job order), so no id or dataset text reaches the phone outside the job file.
Pure: no device I/O here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import PurePosixPath
from typing import Any

from android_runner.answer_text import cap_answer
from android_runner.backend import classify_backend, split_lines
from android_runner.bench import bench_order
from android_runner.contract import (
    FIDELITY_MAX_TOKENS,
    RESULT_LINE_MAX_BYTES,
    RESULT_LINE_MAX_DEPTH,
    FidelityScores,
    JobItem,
    JsonBoundError,
    SampleResult,
    TurnFigures,
    loads_bounded,
)
from android_runner.conversation import JOB_HEADER, job_file_text, render, reply_text
from android_runner.status import Status, classify, memory_pressure, signal_from_shell_status
from android_runner.threads import ThreadsRan

from ..telemetry.energy import energy_fields, reading_to_json
from ..telemetry.phases import prefill_ms, ttft_phases
from .android_snapshots import conditions, dumpsys_power, power_record
from .base import RunOptions

RUNNER_NAME = "edgefarm_runner"
JOB_FILE = "job.conv"
DIED = "died"  # the driver's line for a sample whose runner died under it (exit status = 128 + signal)


def render_job(numbered: Sequence[tuple[int, JobItem]], device_job: PurePosixPath) -> bytes:
    """The native runner's job file for these (n, item) pairs; media paths under device_job. A bench
    job (`edgefarm bench`: every item a cell) is one `B` record per item (android_runner/native/job.h)."""
    if numbered and all(item.bench for _, item in numbered):
        return bench_job_text(numbered)
    return job_file_text([(n, render(item, str(device_job))) for n, item in numbered])


def bench_job_text(numbered: Sequence[tuple[int, JobItem]]) -> bytes:
    """`S n` / `B n_prompt n_gen n_depth threads backend` / `E` per cell (threads 0: the runtime's), in
    the Python runner's order (bench_order: grouped by engine key, so each engine is loaded once)."""
    number = {id(item): n for n, item in numbered}
    out = [JOB_HEADER]
    for item in bench_order([item for _, item in numbered]):
        n = number[id(item)]
        b = item.bench or {}
        cell = f"B {int(b['n_prompt'])} {int(b['n_gen'])} {int(b['n_depth'])} {int(b.get('threads') or 0)} {b['backend']}"
        out += [f"S {n}", cell, "E"]
    return ("\n".join(out) + "\n").encode()


def _num(v: Any) -> float | None:
    """A device-supplied number, or None for anything else (a string, a bool, NaN, a list...)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


def _int(v: Any) -> int | None:
    return int(v) if isinstance(v, int) and not isinstance(v, bool) else None


def _mb(kb: Any) -> float | None:
    v = _num(kb)
    return round(v / 1024.0, 2) if v is not None and v > 0 else None


def _ms(v: Any) -> float | None:
    n = _num(v)
    return round(n, 3) if n is not None else None


def _count(v: Any) -> int:
    n = _int(v)
    return n if n is not None and n > 0 else 0


def _died_peak(line: Mapping[str, Any]) -> float | None:
    """The dead runner's last memory reading in MB (the driver's, when it has one): max(VmHWM, VmRSS +
    VmSwap); None when the line has none."""
    rss_swap = _mb((_num(line.get("peak_rss_kb")) or 0) + (_num(line.get("peak_swap_kb")) or 0))
    seen = [v for v in (_mb(line.get("peak_hwm_kb")), rss_swap) if v]
    return max(seen) if seen else None


def answer_of(response: Any, truncated: int) -> tuple[str, str]:
    """(the answer text, an error) from the runtime's reply as the runner passed it on: parsed under the
    contract's size and depth bounds, so a hostile reply is that sample's error, never the device's.
    The runner passes a plain text reply on whole, its answer already cut at the cap (`truncated`); only
    another shape is cut, and then it is not a reply."""
    if not isinstance(response, str) or not response:
        return "", ""
    try:
        reply = loads_bounded(response, RESULT_LINE_MAX_BYTES, RESULT_LINE_MAX_DEPTH)
        return cap_answer(reply_text(reply))[0], ""
    except JsonBoundError as e:
        return "", f"the runtime's reply was refused: {e}"
    except (ValueError, TypeError, AttributeError, RecursionError) as e:
        if truncated:
            return "", f"the runtime's reply was cut at its cap and is not plain text: {response[:200]!r}"
        return "", f"the runtime's reply is not a reply ({type(e).__name__}): {response[:200]!r}"


def backend_lines(runtime_log: str, head: int = 500, tail: int = 200) -> list[str]:
    """The runner log's lines (prefixes stripped) that can name the backend: the engine's set-up at the
    start, the latest at the end (a long run's log is not read whole)."""
    lines = [ln.text for ln in split_lines(runtime_log)]
    return lines if len(lines) <= head + tail else lines[:head] + lines[-tail:]


def fidelity_of(value: Any) -> FidelityScores | None:
    """The result line's `fidelity` record (the runner's --fidelity pass), bounded; None when absent."""
    if not isinstance(value, Mapping):
        return None
    try:
        f = FidelityScores.from_dict(value)
    except (TypeError, ValueError):
        return FidelityScores(unscored="the runner's fidelity record is malformed")
    return replace(
        f,
        logp=f.logp[:FIDELITY_MAX_TOKENS],
        answer_ids=f.answer_ids[:FIDELITY_MAX_TOKENS],
        unscored=str(f.unscored)[:2000],
        untokenized=str(f.untokenized)[:2000],
    )


def line_row(
    line: Mapping[str, Any],
    item_id: str,
    opts: RunOptions,
    log_tail: str = "",
    available_mb: float | None = None,
    max_output_tokens: int | None = None,
    heat: str = "",
) -> SampleResult:
    """What the result line alone says (no hook snapshots, no runner log): status, answer, speed,
    memory; the backend as asked when it answered. `with_snapshots` adds the rest.
    `max_output_tokens`: the cap the job gave this sample (its JobItem's), recorded on the row unless the
    line says the cap the runner gave the runtime (its `max_output_tokens`)."""
    raw = str(line.get("status", ""))
    exit_code, signal = _int(line.get("exit_code")), None
    if raw == DIED:
        signal = signal_from_shell_status(exit_code)
        peak = _died_peak(line)
        pressure = memory_pressure(peak, available_mb, log_tail)  # oom only with evidence, else killed
        status = classify(None if signal else exit_code, signal, "", pressure, heat)
        status = Status.ERROR if status == Status.OK else status  # a died line is never an answer
        how = f"signal {signal}" if signal else f"exit status {exit_code}"
        if status == Status.THERMAL_STOP:
            how = f"stopped by the OS for heat, signal {signal}; {heat}"
        elif status in (Status.OOM, Status.KILLED):
            seen = f"peak {peak:.0f} MB" if peak else "no memory reading"
            seen += f" of {available_mb:.0f} MB available" if available_mb else ""
            how += f"; {pressure}" if pressure else f"; no evidence of memory pressure ({seen})"
        error = f"runner died during this sample ({how})" + (f":\n{log_tail}" if log_tail else "")
        exit_code = None if signal else exit_code
    else:
        status = Status(raw) if raw in (Status.OK, Status.ERROR, Status.TIMEOUT) else Status.ERROR
        error = str(line.get("error") or "")[:20000]
    truncated = _count(line.get("output_truncated_bytes"))
    output, bad_reply = answer_of(line.get("response"), truncated)
    if bad_reply:
        status, error = Status.ERROR, bad_reply
    raw_turns = line.get("turns") if isinstance(line.get("turns"), list) else []
    turns = tuple(
        TurnFigures(
            prefill_tokens=_int(t.get("prefill_tokens")),
            prefill_tps=_num(t.get("prefill_tps")),
            decode_tokens=_int(t.get("decode_tokens")),
            decode_tps=_num(t.get("decode_tps")),
            wall_ms=_num(t.get("wall_ms")),
        )
        for t in raw_turns
        if isinstance(t, Mapping)
    )
    last = turns[-1] if turns else None
    # a bench row names its cell's backend (its engine's, not the device's --backend): bench.c
    bench_backend = str(line.get("backend")) if line.get("backend") in ("cpu", "gpu", "npu") else ""
    method = line.get("peak_method") if line.get("peak_method") in ("hwm_reset", "sampled") else ""
    # VmHWM is this sample's peak only when it was reset at the sample's start; else it is the process's
    peaks = [_mb(line.get("peak_rss_kb"))] + ([_mb(line.get("peak_hwm_kb"))] if method != "sampled" else [])
    rss_swap = _mb((_num(line.get("peak_rss_kb")) or 0) + (_num(line.get("peak_swap_kb")) or 0))
    measured = [v for v in (*peaks, rss_swap) if v]
    threads = (_int(line.get("threads")) or None) if bench_backend else opts.threads
    # the CPU threads the engine ran with: the runner's count (bench.c), else the rule (threads.py)
    cpu = (bench_backend or opts.backend) == "cpu"
    ran = ThreadsRan.of(threads, _int(line.get("threads_ran"))) if cpu else None
    return SampleResult(
        id=item_id,
        status=status,
        output=output,
        error=error,
        exit_code=(_int(exit_code) if status != Status.OK else 0),
        signal=signal,
        init_ms=_ms(line.get("init_ms")),
        ttft_ms=_ms(line.get("ttft_ms")),
        # a bench row's counts are its timed turn's (the first turn is the depth fill), as bench.py's
        prefill_tokens=(last.prefill_tokens if bench_backend else sum(t.prefill_tokens or 0 for t in turns))
        if turns
        else None,
        prefill_tps=last.prefill_tps if last else None,
        decode_tokens=(last.decode_tokens if bench_backend else sum(t.decode_tokens or 0 for t in turns))
        if turns
        else None,
        decode_tps=last.decode_tps if last else None,
        infer_ms=_ms(line.get("infer_ms")),
        wall_ms=_ms(line.get("wall_ms")),
        peak_rss_mb=max(measured) if measured else None,  # max(VmHWM if reset, VmRSS + VmSwap): zram counts
        peak_hwm_mb=None if method == "sampled" else _mb(line.get("peak_hwm_kb")),  # never a process-wide one
        peak_anon_mb=_mb(line.get("peak_anon_kb")),
        peak_file_mb=_mb(line.get("peak_file_kb")),
        peak_swap_mb=_mb(line.get("peak_swap_kb")) or (0.0 if "peak_swap_kb" in line else None),
        turns=turns,
        backend=(bench_backend or opts.backend) if status == Status.OK else "",
        backend_requested=bench_backend or opts.backend,
        threads=threads,
        threads_ran=ran.count if ran else None,
        threads_from=ran.source if ran else "",
        engine_load=_int(line.get("engine_load")),
        ttft_phases_ms=None  # a bench row's first turn is its depth fill, not the prompt
        if bench_backend
        else ttft_phases(
            _ms(line.get("ttft_ms")),
            prefill_ms(turns[0].prefill_tokens, turns[0].prefill_tps) if turns else None,
        ),
        runner="native",
        max_output_tokens=_int(line.get("max_output_tokens")) or max_output_tokens,
        peak_method=method,
        mem_sample_ms=_num(line.get("mem_sample_ms")),
        invalid_utf8_bytes=_count(line.get("invalid_utf8_bytes")),
        output_truncated_bytes=truncated,
        runtime_override=str(line.get("runtime_override") or "")[:600],
        fidelity=fidelity_of(line.get("fidelity")),
    )


def with_snapshots(
    row: SampleResult,
    line: Mapping[str, Any],
    opts: RunOptions,
    files: Mapping[str, str],
    runtime_log: Sequence[str] = (),
) -> SampleResult:
    """The line's row (`line_row`) with what the hook's snapshot files say (thermal, cooldown, the
    battery's readings and the energy from them) and the backend the runner log says really ran."""
    status, error, exit_code = row.status, row.error, row.exit_code
    asked = row.backend_requested or opts.backend  # a bench cell may ask another backend than the device's
    verdict = classify_backend(runtime_log, asked, answered=status == Status.OK)
    if verdict.fell_back and status == Status.OK:
        status, error = Status.ERROR, (f"asked for {asked}, the runtime ran on {verdict.ran}:\n"
                                       f"{verdict.evidence}")  # fmt: skip
        exit_code = _int(line.get("exit_code"))  # an ok line: the runner's own exit code (if any)
    power = line.get("power") if isinstance(line.get("power"), Mapping) else None
    if power is None:  # the battery's sysfs folder is closed: dumpsys battery's two readings, if any
        power = reading_to_json(dumpsys_power(files, _ms(line.get("wall_ms"))))
    try:
        power = power_record(power, files)
        energy = energy_fields(power, row.decode_tokens)
    except (TypeError, ValueError, ArithmeticError):  # a power record of the wrong shape: not measured
        power, energy = None, energy_fields(None, row.decode_tokens)
    return replace(
        row,
        status=status,
        error=error,
        exit_code=exit_code,
        backend=verdict.ran or (asked if status == Status.OK else ""),
        **conditions(files),
        power=power,
        **energy,
    )


def parse_line(text: str) -> dict[str, Any] | None:
    """A results.jsonl / RESULT line of the native runner; None for a torn or foreign line."""
    text = text.strip()
    if not text.startswith('{"n":'):
        return None
    try:
        d = loads_bounded(text, RESULT_LINE_MAX_BYTES, RESULT_LINE_MAX_DEPTH)
    except (ValueError, RecursionError):
        return None
    return d if isinstance(d, dict) and isinstance(d.get("n"), int) else None
