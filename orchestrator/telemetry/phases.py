"""Where a sample's time to first token went (pure): encoders, text prefill, the rest.

LiteRT-LM's first prefill turn INCLUDES the media encoders' time (the upstream binary's `Mark
Durations` show `vision_executor` / `audio_executor` inside it: in a captured image sample, TTFT
1.16 s = prefill 1.10 s (of which vision 0.51 s) + 0.06 s). So:

    ttft = [encoder marks] + text_prefill + after_prefill (the first decode step, hand-over)

Only the upstream binary's `--benchmark` reports the marks; LiteRT-LM 0.18.1's C and Python APIs do
not, so rows of the native and Python runners carry `prefill` (encoders included) and `after_prefill`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

ENCODER_MARKS = ("vision_executor", "audio_executor")


def ttft_phases(
    ttft_ms: float | None,
    first_prefill_ms: float | None,
    marks_ms: Sequence[tuple[str, float]] | Mapping[str, float] = (),
) -> dict[str, float] | None:
    """{mark..., "text_prefill" | "prefill", "after_prefill"} in ms, or None without TTFT and prefill."""
    if ttft_ms is None or first_prefill_ms is None or ttft_ms <= 0 or first_prefill_ms < 0:
        return None
    marks = dict(marks_ms.items() if isinstance(marks_ms, Mapping) else marks_ms)
    encoders = {k: round(v, 3) for k, v in marks.items() if k in ENCODER_MARKS and v >= 0}
    out: dict[str, float] = dict(encoders)
    if encoders:
        out["text_prefill"] = round(max(first_prefill_ms - sum(encoders.values()), 0.0), 3)
    else:
        out["prefill"] = round(first_prefill_ms, 3)
    out["after_prefill"] = round(max(ttft_ms - first_prefill_ms, 0.0), 3)
    return out


def prefill_ms(tokens: int | None, tps: float | None) -> float | None:
    """A turn's prefill time from the runtime's own figures (tokens / tokens per second)."""
    if not tokens or not tps or tps <= 0:
        return None
    return tokens / tps * 1000.0
