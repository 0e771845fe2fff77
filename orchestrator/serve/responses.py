"""OpenAI's response bodies from a request's row: chat.completion, its stream chunks, text_completion,
`usage` as the runtime counted the tokens, and the `edgefarm` object (the device, its runtime and the
row's figures, named as the figure catalogue names them)."""

from __future__ import annotations

import time
from typing import Any

from android_runner.contract import SampleResult

from ..catalogue import MEASURES
from ..telemetry.energy import energy_trusted
from .api import ApiError, Ask
from .engine import Engine

# a row's status -> the HTTP answer when it has no answer (docs/serve.md)
STATUS_HTTP = {"unsupported": 400, "error": 500, "timeout": 504, "crash": 503, "oom": 503, "killed": 503}


def usage(row: SampleResult) -> dict[str, int]:
    """Tokens as the runtime counted them: prompt = prefill (history included), completion = decode."""
    prompt, completion = row.prefill_tokens or 0, row.decode_tokens or 0
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def edgefarm_object(engine: Engine, row: SampleResult) -> dict[str, Any]:
    """Which device answered, on what, and how fast: the catalogue's per-sample measures by name."""
    runner = engine.runner
    out: dict[str, Any] = {
        "device": engine.device_name,
        "kind": engine.device.kind,
        "backend": row.backend or engine.opts.backend,
        "backend_requested": row.backend_requested or engine.opts.backend,
        "runner": row.runner or runner.get("runner", ""),
        "runtime_version": runner.get("runtime_version", ""),
        "run_id": "",
        "request_id": row.id,
        "status": row.status,
        "init_ms": row.init_ms,
        "prefill_tokens": row.prefill_tokens,
        "decode_tokens": row.decode_tokens,
        "infer_ms": row.infer_ms,
        "threads_ran": row.threads_ran,
    }
    out.update({m.name: getattr(row, m.name, None) for m in MEASURES})  # wall, TTFT, speeds, energy, peak
    out.update(peak_method=row.peak_method, power_source=row.power_source or None,
               energy_trusted=energy_trusted(row) if row.energy_j is not None else None,
               energy_unreliable=row.energy_unreliable or None)  # fmt: skip
    return out


def row_error(engine: Engine, row: SampleResult) -> ApiError | None:
    """A row without an answer, as the request's error (None: it has its answer)."""
    if row.status == "ok":
        return None
    code = STATUS_HTTP.get(row.status, 500)
    first = (row.error or row.status).splitlines()[0][:500]
    return ApiError(code, f"{engine.id}: {row.status}: {first}", code=row.status)


def finish_reason(row: SampleResult, ask: Ask) -> str:
    return "length" if (row.decode_tokens or 0) >= ask.max_tokens else "stop"


def completion_body(cid: str, engine: Engine, ask: Ask, row: SampleResult, run_id: str) -> dict[str, Any]:
    """The whole answer: chat.completion or text_completion."""
    ef = {**edgefarm_object(engine, row), "run_id": run_id}
    if ask.chat:
        choice = {"index": 0, "message": {"role": "assistant", "content": row.output},
                  "logprobs": None, "finish_reason": finish_reason(row, ask)}  # fmt: skip
        kind = "chat.completion"
    else:
        choice = {"index": 0, "text": row.output, "logprobs": None, "finish_reason": finish_reason(row, ask)}
        kind = "text_completion"
    return {"id": cid, "object": kind, "created": int(time.time()), "model": engine.id, "choices": [choice],
            "usage": usage(row), "system_fingerprint": None, "edgefarm": ef}  # fmt: skip


def chunk_body(cid: str, engine: Engine, ask: Ask, text: str | None, row: SampleResult | None = None,
               run_id: str = "") -> dict[str, Any]:  # fmt: skip
    """One server-sent event: a piece of the answer, or (row given) the last one with the finish reason,
    the usage and the edgefarm object."""
    if ask.chat:
        delta = {} if text is None else {"role": "assistant", "content": text}
        choice: dict[str, Any] = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}
        kind = "chat.completion.chunk"
    else:
        choice = {"index": 0, "text": text or "", "logprobs": None, "finish_reason": None}
        kind = "text_completion"
    body: dict[str, Any] = {"id": cid, "object": kind, "created": int(time.time()), "model": engine.id,
                            "choices": [choice]}  # fmt: skip
    if row is not None:
        choice["finish_reason"] = finish_reason(row, ask)
        body["usage"] = usage(row)
        body["edgefarm"] = {**edgefarm_object(engine, row), "run_id": run_id}
    return body
