"""One rule for a model's answer text on every runner (issue 21): invalid UTF-8 is replaced with U+FFFD
(each maximal invalid subpart, as Python's errors="replace" and the native runner do) and counted; an
answer over OUTPUT_MAX_BYTES is cut on a character boundary and the bytes dropped are counted. The row
carries both counts (`invalid_utf8_bytes`, `output_truncated_bytes`), so the same answer reads the same
on a phone, a board and this host. Stdlib only: copied to boards with the runner."""

from __future__ import annotations

import json

from .contract import OUTPUT_MAX_BYTES

# The native runner's reply for a plain text answer starts so (android_runner/native/edgefarm_runner.c
# passes the runtime's JSON on; the runtime writes it in this order).
_TEXT_REPLY_HEAD = '{"role":"assistant","content":[{"type":"text","text":"'


def decode_answer(data: bytes) -> tuple[str, int]:
    """UTF-8 bytes -> (text, bytes of invalid UTF-8 replaced by U+FFFD)."""
    parts: list[str] = []
    invalid, pos = 0, 0
    while True:
        try:
            parts.append(data[pos:].decode("utf-8"))
            return "".join(parts), invalid
        except UnicodeDecodeError as e:
            parts.append(data[pos : pos + e.start].decode("utf-8") + "\ufffd")
            invalid += e.end - e.start
            pos += e.end


def cap_answer(text: str, max_bytes: int = OUTPUT_MAX_BYTES) -> tuple[str, int]:
    """(text cut to max_bytes of UTF-8 on a character boundary, bytes dropped)."""
    if len(text) * 4 <= max_bytes:
        return text, 0
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text, 0
    kept = data[:max_bytes].decode("utf-8", "ignore")
    return kept, len(data) - len(kept.encode("utf-8", "surrogatepass"))


def clean_answer(raw: str | bytes, max_bytes: int = OUTPUT_MAX_BYTES) -> tuple[str, int, int]:
    """The answer as every row keeps it: (text, invalid_utf8_bytes, output_truncated_bytes)."""
    if isinstance(raw, str):
        try:
            raw.encode("utf-8")
        except UnicodeEncodeError:  # bytes a binding kept as lone surrogates (surrogateescape): the bytes
            raw = raw.encode("utf-8", "surrogateescape")
    text, invalid = decode_answer(raw) if isinstance(raw, bytes) else (raw, 0)
    kept, dropped = cap_answer(text, max_bytes)
    return kept, invalid, dropped


def text_of_cut_reply(head: str) -> str | None:
    """The answer text in a runtime reply the native runner cut at OUTPUT_MAX_BYTES (no longer JSON):
    the JSON string after the plain-text reply's head, decoded up to the cut; None for another shape."""
    if not head.startswith(_TEXT_REPLY_HEAD):
        return None
    body = head[len(_TEXT_REPLY_HEAD) :]
    for cut in range(7):  # the cut may fall inside an escape such as \\u00e9
        try:
            text = json.loads('"' + body[: len(body) - cut] + '"')
        except ValueError:
            continue
        return text if isinstance(text, str) else None
    return None
