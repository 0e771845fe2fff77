"""One rendering of a sample into a LiteRT-LM conversation, shared by every runner.

The Python runner (boards, this host) and the native phone runner both send exactly what
`render` returns: the system message as plain text, the tools as the JSON array the runtime's
`set_tools` takes, the sampler, the output cap, and one message JSON per turn with media as
structured parts (`{"type": "image", "path": ABS}`). So a row on a phone and a row on a board
differ only by the device, and text from a dataset is only ever a text part: nothing parses
`[image:/etc/passwd]` in it. The JSON is produced with `json.dumps` defaults, as the runtime's own
Python package does, so the bytes the runtime sees are the same whichever runner sends them.
Stdlib only: this module is copied to boards.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .contract import FidelityAsk, JobItem

MEDIA_KINDS = ("image", "audio")
# SamplerConfig defaults of the runtime's Python package (litert_lm/utils.py): unset fields take these.
SAMPLER_DEFAULTS = {"top_k": 1, "top_p": 0.95, "temperature": 1.0, "seed": 0}
JOB_HEADER = "EFJOB 1"


@dataclass(frozen=True)
class Sampler:
    top_k: int = 1
    top_p: float = 0.95
    temperature: float = 1.0
    seed: int = 0


@dataclass(frozen=True)
class Conversation:
    """What the runtime gets for one sample: config at creation, then one message per turn."""

    system_message: str | None
    tools_json: str | None  # JSON array of {"type": "function", "function": {...}}
    sampler: Sampler
    max_output_tokens: int
    messages: tuple[str, ...]  # one JSON message per turn
    fidelity: FidelityAsk | None = (
        None  # --fidelity: the scoring pass after the answer (android_runner/fidelity.py)
    )
    history_json: str | None = None  # `edgefarm serve`: JSON array of the messages before the turns
    stream: bool = False  # `edgefarm serve`: the last turn's answer piece by piece (PIECE lines)


def sampler_of(spec: Mapping[str, Any] | None) -> Sampler:
    values = dict(SAMPLER_DEFAULTS)
    values.update({k: v for k, v in (spec or {}).items() if k in SAMPLER_DEFAULTS and v is not None})
    return Sampler(
        int(values["top_k"]), float(values["top_p"]), float(values["temperature"]), int(values["seed"])
    )


def message_json(turn: Sequence[Any], media_root: str) -> str:
    """One user turn as the runtime's message JSON; media paths made absolute under media_root."""
    return json.dumps(_message(turn, media_root))


def _message(turn: Sequence[Any], media_root: str, role: str = "user") -> dict[str, Any]:
    content: list[dict[str, str]] = []
    for part in turn:
        if part.kind == "text":
            if part.text:
                content.append({"type": "text", "text": part.text})
        elif part.kind in MEDIA_KINDS:
            content.append({"type": part.kind, "path": posixpath.join(media_root, part.path)})
        else:
            raise ValueError(f"the runtime takes no {part.kind} input")
    return {"role": role, "content": content}


def render(item: JobItem, media_root: str) -> Conversation:
    """The conversation for one job item; media_root is the job folder as the device sees it."""
    tools = json.dumps(list(item.tools)) if item.tools else None
    return Conversation(
        system_message=item.system or None,
        tools_json=tools,
        sampler=sampler_of(item.sampler),
        max_output_tokens=int(item.max_output_tokens),
        messages=tuple(message_json(turn, media_root) for turn in item.turns),
        fidelity=item.fidelity,
        history_json=json.dumps([_message(parts, media_root, role) for role, parts in item.history])
        if item.history
        else None,
        stream=item.stream,
    )


def unsupported_reason(item: JobItem, *, vision: bool, audio: bool) -> str:
    """Why a model with these encoders cannot take the item ("" when it can): skipped, not failed."""
    turns = (*item.turns, *(parts for _, parts in item.history))
    kinds = {p.kind for turn in turns for p in turn if p.kind != "text"}
    if kinds - set(MEDIA_KINDS):
        return "the LiteRT-LM runtime takes no video input"
    if "image" in kinds and not vision:
        return "the model has no vision encoder (text-only or audio-only model)"
    if "audio" in kinds and not audio:
        return "the model has no audio encoder"
    return ""


def job_file_text(numbered: Sequence[tuple[int, Conversation]]) -> bytes:
    """The native runner's job file (see android_runner/native/edgefarm_runner.c): length-prefixed
    fields, so any text passes through byte for byte and the phone needs no JSON parser."""
    out = bytearray(f"{JOB_HEADER}\n".encode())

    def field(tag: str, text: str) -> None:
        data = text.encode("utf-8")
        out.extend(f"{tag} {len(data)}\n".encode())
        out.extend(data + b"\n")

    for n, conv in numbered:
        out.extend(f"S {n}\n".encode())
        if conv.system_message:
            field("Y", conv.system_message)
        if conv.tools_json:
            field("T", conv.tools_json)
        if conv.history_json:  # `edgefarm serve`: the conversation's first messages
            field("H", conv.history_json)
        s = conv.sampler
        out.extend(f"P {s.top_k} {s.top_p!r} {s.temperature!r} {s.seed}\n".encode())
        out.extend(f"O {conv.max_output_tokens}\n".encode())
        for message in conv.messages:
            field("M", message)
        if conv.stream:  # A: the native runner streams the last turn's answer (PIECE lines)
            out.extend(b"A\n")
        if conv.fidelity is not None:  # K: tokenize the answer; F: prefill chunks, R: the text to score
            out.extend(b"K\n")
            if conv.fidelity.target and not conv.fidelity.skip:
                for chunk in conv.fidelity.prefill:
                    field("F", chunk)
                field("R", conv.fidelity.target)
            else:
                field("X", conv.fidelity.skip or "nothing to score")
        out.extend(b"E\n")
    return bytes(out)


def reply_text(response: Mapping[str, Any]) -> str:
    """The runtime's response JSON -> the row's output text.

    A tool call is rendered as `{"name": ..., "arguments": {...}}` (a list for several calls), the
    form the tool-call scorer reads; otherwise the text parts joined.
    """
    calls = response.get("tool_calls") or []
    if calls:
        rendered = []
        for call in calls:
            fn = call.get("function", call) if isinstance(call, Mapping) else {}
            args = fn.get("arguments", {})
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except ValueError:
                    pass
            rendered.append({"name": fn.get("name", ""), "arguments": args})
        return json.dumps(rendered[0] if len(rendered) == 1 else rendered, ensure_ascii=False)
    content = response.get("content", "")
    if isinstance(content, str):
        return content
    return "".join(
        str(c.get("text", "")) for c in content if isinstance(c, Mapping) and c.get("type") == "text"
    )
