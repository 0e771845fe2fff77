"""One rule for a model's answer text on every runner (issue 21): invalid UTF-8 is replaced with U+FFFD
(each maximal invalid subpart, as Python's errors="replace" and the native runner do) and counted; an
answer over OUTPUT_MAX_BYTES is cut on a character boundary and the bytes dropped are counted. The row
carries both counts (`invalid_utf8_bytes`, `output_truncated_bytes`), so the same answer reads the same
on a phone, a board and this host. Stdlib only: copied to boards with the runner."""

from __future__ import annotations

from .contract import OUTPUT_MAX_BYTES


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
        except UnicodeEncodeError:  # bytes a binding kept as lone surrogates (surrogateescape): the bytes;
            try:  # another lone surrogate (a JSON \ud800 escape): its 3 bytes, invalid, as the native runner does
                raw = raw.encode("utf-8", "surrogateescape")
            except UnicodeEncodeError:
                raw = raw.encode("utf-8", "surrogatepass")
    text, invalid = decode_answer(raw) if isinstance(raw, bytes) else (raw, 0)
    kept, dropped = cap_answer(text, max_bytes)
    return kept, invalid, dropped
