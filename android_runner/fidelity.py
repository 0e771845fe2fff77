"""--fidelity on a board or this host: after a sample's answer, the same engine scores the reference
answer teacher-forced from the sample's prompt and tokenizes the greedy answer (docs/fidelity.md).

One session per sample on the engine already loaded (no second model load): `run_prefill` with the
prompt text the host rendered (FidelityAsk.prefill), then `run_text_scoring([reference])`, the
runtime's per-token log-likelihoods. The native phone runner does the same through the C API
(android_runner/native/), so every device scores the same text from the same prefill.
Stdlib only: this module is copied to boards.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

from .contract import FIDELITY_MAX_TOKENS, FidelityAsk, FidelityScores


class RuntimeLog(Protocol):
    def since(self, offset: int, max_chars: int = 800) -> str: ...


def _why(e: Exception, log: RuntimeLog, log_at: int) -> str:
    """The runtime's generic error, with what it wrote to its log since log_at (its real status)."""
    detail = log.since(log_at, 400)
    return f"{type(e).__name__}: {e}" + (f"\n{detail}" if detail else "")


def score_fidelity(
    engine: Any, ask: FidelityAsk, answer: str, log: RuntimeLog, log_at: int
) -> FidelityScores:
    """The row's FidelityScores: `engine` is a litert_lm.Engine; never raises (a failure is the reason)."""
    t0 = time.perf_counter()
    ids: list[int] = []
    untokenized = ""
    try:
        ids = list(engine.tokenize(answer)) if answer else []
    except Exception as e:  # noqa: BLE001 - the runtime raises generic errors
        untokenized = _why(e, log, log_at)
    logp: list[float] = []
    n_target: int | None = None
    total: float | None = None
    unscored = ask.skip
    if ask.target and not ask.skip:
        try:
            with engine.create_session() as session:
                if ask.prefill:  # none: scored from the session's start (the runtime refuses an empty prefill)
                    session.run_prefill(list(ask.prefill))
                out = session.run_text_scoring([ask.target], store_token_lengths=True)
            if not out.token_scores:
                unscored = "the runtime returned no per-token scores"
            else:
                logp = [float(x) for x in out.token_scores[0]]
                n_target = int(out.token_lengths[0]) if out.token_lengths else len(logp)
                total = 0.0
                for x in logp:  # in order, as the native runner adds them (sum() compensates from 3.12)
                    total += x
        except Exception as e:  # noqa: BLE001
            unscored = _why(e, log, log_at)
    return FidelityScores(
        logp=tuple(logp[:FIDELITY_MAX_TOKENS]),
        target_tokens=n_target,
        logp_sum=total,
        answer_ids=tuple(ids[:FIDELITY_MAX_TOKENS]),
        answer_tokens=None if untokenized else len(ids),
        score_ms=round((time.perf_counter() - t0) * 1000.0, 3),
        unscored=unscored,
        untokenized=untokenized,
    )
