"""evalscope General-VQA: OpenAI `messages` rows (structured parts or MMMU-style placeholders) + `answer`.

System messages become `Sample.system`; user messages become turns in order; assistant (and
tool) messages of a multi-turn history are not sent: the runner sends the user turns one after the
other and the model answers each itself (docs/evalscope.md says why). Plain-string user content
is scanned for `<image N>` placeholders; structured content is taken as given.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import DatasetError
from ..jsonio import DATASET_ROW, JsonBoundError, describe, loads
from .evalscope_files import Row, detect_columns, format_loader
from .evalscope_media import (
    KINDS,
    MediaContext,
    check_format_hint,
    media_map,
    modality,
    placeholders,
    resolve_value,
    split_text,
    warn_missing,
)
from .types import Part, Sample, Turn

FORMAT = "general_vqa"
PRETTY = "General-VQA"
DEFAULT_SPLIT = "test"  # evalscope's eval_split for general_vqa
TASK = "vqa"
_SYSTEM_ROLES = ("system", "developer")
_SKIPPED_ROLES = ("assistant", "tool", "function")


# evalscope's function-calling rows are `messages` plus one of these: General-FunctionCalling
# (evalscope_fc.py, which reads the messages with this module), never General-VQA.
FC_COLUMNS = frozenset({"tools", "should_call_tool"})


def function_calling(cols: set[str]) -> bool:
    """evalscope's function-calling rows: `messages` plus `tools` or `should_call_tool`."""
    return "messages" in cols and bool(FC_COLUMNS & cols)


def fits(cols: set[str]) -> bool:
    return "messages" in cols and not function_calling(cols)  # function-calling rows are refused


def fc_refusal(path: Path) -> DatasetError:
    """For `--format general_vqa` on a function-calling file: it is not General-VQA."""
    return DatasetError(
        "this is evalscope's General-FunctionCalling format (`messages`, `tools`, `should_call_tool`), not "
        "General-VQA: read as General-VQA every row would be scored against an empty answer",
        fix="leave --format out (detected) or pass --format general_fc",
        where=str(path),
    )


def _text_of(content: Any, ctx: MediaContext, field: str) -> str:
    """System content: a string or a list of text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        if len(texts) == len(content):
            return "".join(texts)
    raise ctx.problem("a system message must hold text (a string or text parts)", field)


def _structured(content: list, ctx: MediaContext, field: str) -> list[Part]:
    """OpenAI content parts -> Parts, in order; text is not scanned for placeholders."""
    parts: list[Part] = []
    for i, item in enumerate(content):
        f = f"{field}[{i}]"
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "text":
            parts.append(Part(kind="text", text=str(item.get("text", ""))))
        elif kind == "image_url":
            value = item.get("image_url")
            value = value.get("url") if isinstance(value, dict) else value
            parts.append(Part(kind="image", path=resolve_value(value, "image", ctx, f"{f}.image_url.url")))
        elif kind == "input_audio":
            audio = item.get("input_audio")
            if not isinstance(audio, dict):
                raise ctx.problem("input_audio must be an object with 'data' (and 'format')", f)
            check_format_hint(audio.get("format"), "audio", ctx, f"{f}.input_audio.format")
            parts.append(
                Part(
                    kind="audio", path=resolve_value(audio.get("data"), "audio", ctx, f"{f}.input_audio.data")
                )
            )
        elif kind == "video_url":
            value = item.get("video_url")
            value = value.get("url") if isinstance(value, dict) else value
            parts.append(Part(kind="video", path=resolve_value(value, "video", ctx, f"{f}.video_url.url")))
        else:
            raise ctx.problem(
                f"unknown content part type {kind!r}; use text, image_url, input_audio or video_url", f
            )
    return parts


def parse_messages(raw: Any, ctx: MediaContext) -> list[dict]:
    """`messages` as a list of {role, content}; a TSV cell (or a JSONL string) holds it as JSON."""
    if isinstance(raw, str):
        try:
            raw = loads(raw, DATASET_ROW)
        except JsonBoundError as e:
            raise ctx.problem(f"messages is {describe(e, raw)[0]}", "messages") from None
        except json.JSONDecodeError as e:
            raise ctx.problem(f"messages is not valid JSON: {e.msg} (column {e.colno})", "messages") from None
    if not isinstance(raw, list) or not raw:
        raise ctx.problem("messages must be a non-empty list of {role, content} objects", "messages")
    for i, m in enumerate(raw):
        if not isinstance(m, dict) or "role" not in m:
            raise ctx.problem("each message must be an object with 'role' and 'content'", f"messages[{i}]")
    return raw


def row_to_sample(row: Row, ctx: MediaContext, subset: str) -> Sample:
    """One General-VQA row -> Sample (raises RowProblem)."""
    messages = parse_messages(row.data.get("messages"), ctx)
    referenced: dict[str, set[int]] = {k: set() for k in KINDS}
    for m in messages:
        if m["role"] == "user" and isinstance(m.get("content"), str):
            for kind, nums in placeholders(m["content"]).items():
                referenced[kind] |= nums
    maps = {kind: media_map(row.data, kind, ctx, referenced[kind]) for kind in KINDS if referenced[kind]}
    system: list[str] = []
    turns: list[Turn] = []
    for i, m in enumerate(messages):
        role, content, field = m["role"], m.get("content"), f"messages[{i}].content"
        if role in _SYSTEM_ROLES:
            system.append(_text_of(content, ctx, field))
        elif role == "user":
            if isinstance(content, str):
                parts = split_text(content, maps, warn_missing(ctx.where))
                turns.append(Turn(tuple(parts) or (Part(kind="text", text=content),)))
            elif isinstance(content, list):
                turns.append(Turn(tuple(_structured(content, ctx, field))))
            else:
                raise ctx.problem("user content must be a string or a list of content parts", field)
        elif role not in _SKIPPED_ROLES:
            raise ctx.problem(f"unknown role {role!r}; use system, user or assistant", f"messages[{i}].role")
    if not turns:
        raise ctx.problem("no user message: there is nothing to ask the model", "messages")
    answer = row.data.get("answer")
    answer = "" if answer is None else str(answer)
    all_parts = tuple(p for t in turns for p in t.parts)
    return Sample(
        id=ctx.test_id,
        modality=modality(all_parts),
        task=TASK,
        turns=tuple(turns),
        reference=answer,
        references=(answer,) if answer else (),
        format=FORMAT,
        subset=subset,
        system="\n\n".join(system) if system else None,
        where=ctx.where,
    )


def detect(path: Path) -> bool:
    """A .jsonl/.tsv file with a `messages` column, or a folder holding one (not EdgeMMEval)."""
    return detect_columns(path, fits)


def refuse_function_calling(file: Path) -> None:
    """`--format general_vqa` on a function-calling file: refused (exit 2), it is General-FC."""
    if detect_columns(file, function_calling):
        raise fc_refusal(file)


load = format_loader(FORMAT, fits, row_to_sample, DEFAULT_SPLIT, check_file=refuse_function_calling)
"""Load a General-VQA file or folder (+ subset); every bad row is a Problem on the Dataset."""
