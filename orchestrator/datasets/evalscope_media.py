"""evalscope's Media Placeholder Mechanism, shared by General-VQA and General-VMCQ.

`<image N>` / `<audio N>` / `<video N>` (also `<image_N>`) in plain text are replaced in place by
the media of the row's `image_N` / `audio_N` / `video_N` column (N in [1, 100]) or of the N-th
element of its plural list column (`images`, `audios`, `videos`; not capped). A media value is a
local path, a data URI, bare base64, or a `{"path": ...}` / `{"bytes": ...}` dict. Local paths
resolve against the dataset folder, then the current directory (as evalscope does), never outside
both; HTTP(S) URLs are refused (devices have no network); decoded bytes land in a content-addressed
cache folder. See docs/evalscope.md for every rule and where we differ from evalscope.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import logging
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..jsonio import DATASET_ROW, loads
from .paths import resolve_media
from .types import Part, Problem

log = logging.getLogger("edgefarm.datasets.evalscope")

MAX_INDEXED = 100  # image_k / audio_k / video_k for k in [1, MAX_INDEXED]
KINDS = ("image", "audio", "video")
PLACEHOLDER = re.compile(r"<(image|video|audio)[_ ](\d+)>")
FORMAT_HINTS = {"audio": ("wav", "mp3"), "video": ("mp4", "mpeg", "mov", "avi")}
_B64 = re.compile(r"^[A-Za-z0-9+/\s]+={0,2}$")
_DATA_URI = re.compile(r"^data:([\w.+-]+/[\w.+-]+)?((?:;[^,;]*)*?);base64,(.*)$", re.DOTALL | re.IGNORECASE)
_MIME_EXT = {
    "image/jpeg": ".jpg", "image/jpg": ".jpg", "image/png": ".png", "image/gif": ".gif",
    "image/webp": ".webp", "image/bmp": ".bmp", "audio/wav": ".wav", "audio/x-wav": ".wav",
    "audio/wave": ".wav", "audio/vnd.wave": ".wav", "audio/mpeg": ".mp3", "audio/mp3": ".mp3",
    "audio/x-mp3": ".mp3", "audio/flac": ".flac", "audio/ogg": ".ogg", "video/mp4": ".mp4",
    "video/mpeg": ".mpeg", "video/quicktime": ".mov", "video/x-msvideo": ".avi",
}  # fmt: skip


class RowProblem(Exception):
    """Carries one Problem out of row parsing; the loader turns it into a Dataset problem."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(str(problem))
        self.problem = problem


@dataclass(frozen=True)
class MediaContext:
    """Where a row's media may come from and where decoded bytes go."""

    root: Path  # the dataset folder (the folder given, or the folder of the file given)
    cwd: Path  # the current directory, the second place evalscope looks
    cache_dir: Path  # decoded data URIs / base64 / bytes, content-addressed
    where: str  # file:line of the row
    test_id: str = ""

    def problem(self, message: str, field: str = "") -> RowProblem:
        return RowProblem(Problem(where=self.where, message=message, test_id=self.test_id, field=field))


def is_empty(value: Any) -> bool:
    """evalscope skips None and '' cells; a whitespace-only TSV cell counts as empty too."""
    return value is None or (isinstance(value, str) and not value.strip())


def sniff(data: bytes) -> tuple[str, str] | None:
    """(kind, extension) from a file signature, or None if unknown."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image", ".png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image", ".jpg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image", ".gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image", ".webp"
    if data.startswith(b"BM") and len(data) > 26:
        return "image", ".bmp"
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "audio", ".wav"
    if data[:4] == b"RIFF" and data[8:12] == b"AVI ":
        return "video", ".avi"
    if data.startswith(b"ID3") or data[:2] in (b"\xff\xfb", b"\xff\xf3", b"\xff\xf2"):
        return "audio", ".mp3"
    if data.startswith(b"fLaC"):
        return "audio", ".flac"
    if data.startswith(b"OggS"):
        return "audio", ".ogg"
    if data[4:8] == b"ftyp":
        return "video", ".mov" if data[8:10] == b"qt" else ".mp4"
    if data.startswith((b"\x00\x00\x01\xba", b"\x00\x00\x01\xb3")):
        return "video", ".mpeg"
    return None


def _store(data: bytes, ext: str, ctx: MediaContext) -> Path:
    """Write decoded bytes once under a content-addressed name (atomic), return the absolute path."""
    ctx.cache_dir.mkdir(parents=True, exist_ok=True)
    path = (ctx.cache_dir / f"{hashlib.sha256(data).hexdigest()[:32]}{ext}").resolve()
    if not path.exists():
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    return path


def _decoded(data: bytes, kind: str, ctx: MediaContext, field: str, mime: str | None = None) -> Path:
    found = sniff(data)
    if mime:
        family = mime.split("/", 1)[0].lower()
        if family != kind:
            raise ctx.problem(f"data URI holds {mime!r}, but this is an {kind} field", field)
        ext = _MIME_EXT.get(mime.lower()) or (found[1] if found and found[0] == kind else f".{kind}")
        return _store(data, ext, ctx)
    if found is None:
        raise ctx.problem(f"decoded bytes are not a recognisable {kind} file", field)
    if found[0] != kind:
        raise ctx.problem(f"decoded bytes are {found[0]} ({found[1]}), but this is an {kind} field", field)
    return _store(data, found[1], ctx)


def _b64decode(text: str) -> bytes | None:
    try:
        return base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError):
        return None


def _local(name: str, ctx: MediaContext, field: str) -> Path | RowProblem:
    """Resolve a local path: dataset folder first, then the cwd; absolute only inside either."""
    roots = [ctx.root.resolve(), ctx.cwd.resolve()]
    if os.path.isabs(name):
        absolute = Path(name)
        inside = [r for r in roots if absolute.resolve().is_relative_to(r)]
        if not inside:
            return ctx.problem(
                f"media {name!r} is outside the dataset folder {roots[0]} and the current directory "
                f"{roots[1]}; copy it into the dataset folder and name it relative to it",
                field,
            )
        roots, name = inside[:1], absolute.resolve().relative_to(inside[0]).as_posix()
    first: Problem | None = None
    for root in roots:
        got = resolve_media(root, name, where=ctx.where, test_id=ctx.test_id, field=field)
        if isinstance(got, Path):
            return got
        if first is None or ("outside" in got.message and "outside" not in first.message):
            first = got
    assert first is not None
    if "not found" in first.message and len(roots) == 2:
        first = Problem(
            where=ctx.where, test_id=ctx.test_id, field=field,
            message=f"media file {name!r} not found in the dataset folder {roots[0]} "
            f"nor the current directory {roots[1]}",
        )  # fmt: skip
    return RowProblem(first)


def resolve_value(value: Any, kind: str, ctx: MediaContext, field: str) -> Path:
    """One media cell -> absolute host path; raises RowProblem saying why not."""
    if isinstance(value, Mapping):
        if isinstance(value.get("bytes"), (bytes, bytearray)):
            return _decoded(bytes(value["bytes"]), kind, ctx, field)
        if isinstance(value.get("bytes"), str):
            data = _b64decode(value["bytes"])
            if data is None:
                raise ctx.problem("'bytes' is a string but not base64", field)
            return _decoded(data, kind, ctx, field)
        for key in ("path", "url", "data", kind):
            if isinstance(value.get(key), str) and value[key].strip():
                return resolve_value(value[key], kind, ctx, field)
        raise ctx.problem(
            f"media dict needs one of 'path', 'bytes', 'url', 'data', '{kind}'; got {value!r}", field
        )
    if not isinstance(value, str):
        raise ctx.problem(
            f"{kind} must be a path, data URI, base64 string or dict, got {type(value).__name__}", field
        )
    text = value.strip()
    if text.lower().startswith(("http://", "https://")):
        raise ctx.problem(
            f"{kind} {text[:80]!r} is a URL; edgefarm does not fetch media (devices have no network)",
            field,
        )
    if text.lower().startswith("data:"):
        m = _DATA_URI.match(text)
        data = _b64decode(m.group(3)) if m else None
        if m is None or data is None:
            raise ctx.problem(f"{kind} data URI is not base64 (expected data:<mime>;base64,<data>)", field)
        return _decoded(data, kind, ctx, field, mime=m.group(1))
    if len(text) >= 16 and _B64.match(text):  # bare base64 (checked first: it may be too long for a path)
        data = _b64decode(text)
        if data is not None and sniff(data) is not None:
            return _decoded(data, kind, ctx, field)
    try:
        got = _local(text, ctx, field)
    except OSError as e:  # e.g. a name too long for the filesystem
        raise ctx.problem(
            f"{kind} {text[:60]!r}... is neither a readable path nor base64 media: {e}", field
        ) from None
    if isinstance(got, Path):
        return got
    raise got


def check_format_hint(value: Any, kind: str, ctx: MediaContext, field: str) -> None:
    """`audio_k_format` / `video_k_format` (and input_audio.format) must be a supported format."""
    if is_empty(value) or kind not in FORMAT_HINTS:
        return
    if str(value).strip().lower() not in FORMAT_HINTS[kind]:
        raise ctx.problem(
            f"unsupported {kind} format {value!r}; use one of {', '.join(FORMAT_HINTS[kind])}", field
        )


def list_column(row: Mapping[str, Any], kind: str, ctx: MediaContext) -> list[Any]:
    """The plural column (`images` ...) as a list; a TSV cell holds it as JSON."""
    raw = row.get(f"{kind}s")
    if is_empty(raw):
        return []
    if isinstance(raw, str):
        try:
            raw = loads(raw, DATASET_ROW)
        except ValueError:  # not JSON, or over a size/nesting bound
            raise ctx.problem(f"'{kind}s' must be a list (a JSON array in TSV)", f"{kind}s") from None
    if not isinstance(raw, list):
        raise ctx.problem(f"'{kind}s' must be a list of media values, got {type(raw).__name__}", f"{kind}s")
    return raw


def media_map(
    row: Mapping[str, Any], kind: str, ctx: MediaContext, referenced: set[int] | None
) -> dict[int, Path]:
    """Resolve a row's media of one kind, by placeholder number.

    referenced=None (General-VMCQ): every non-empty column is resolved and validated; the list is
    ignored when any indexed column is non-empty. referenced={...} (General-VQA): only those
    numbers are resolved; the list is ignored when any referenced indexed column is non-empty.
    """
    indexed = {
        k: row[f"{kind}_{k}"] for k in range(1, MAX_INDEXED + 1) if not is_empty(row.get(f"{kind}_{k}"))
    }
    wanted = (lambda k: True) if referenced is None else (lambda k: k in referenced)
    use_indexed = any(wanted(k) for k in indexed)
    out: dict[int, Path] = {}
    if use_indexed:
        for k, value in indexed.items():
            if wanted(k):
                check_format_hint(row.get(f"{kind}_{k}_format"), kind, ctx, f"{kind}_{k}_format")
                out[k] = resolve_value(value, kind, ctx, f"{kind}_{k}")
        return out
    if referenced is not None and not referenced:
        return out
    for i, value in enumerate(list_column(row, kind, ctx), start=1):
        if not is_empty(value) and wanted(i):
            out[i] = resolve_value(value, kind, ctx, f"{kind}s[{i - 1}]")
    return out


def placeholders(text: str) -> dict[str, set[int]]:
    """Placeholder numbers per kind found in `text`."""
    found: dict[str, set[int]] = {k: set() for k in KINDS}
    for m in PLACEHOLDER.finditer(text):
        found[m.group(1)].add(int(m.group(2)))
    return found


def split_text(
    text: str,
    maps: Mapping[str, Mapping[int, Path]],
    on_missing: Callable[[str], None],
) -> list[Part]:
    """Text -> ordered parts with each placeholder replaced by its media (evalscope's rules).

    Text between placeholders is kept verbatim when it holds more than whitespace; a placeholder
    with no media is dropped and reported through `on_missing("<image 2>")`.
    """
    parts: list[Part] = []
    last = 0
    for m in PLACEHOLDER.finditer(text):
        segment = text[last : m.start()]
        if segment.strip():
            parts.append(Part(kind="text", text=segment))
        kind, k = m.group(1), int(m.group(2))
        path = maps.get(kind, {}).get(k)
        if path is not None:
            parts.append(Part(kind=kind, path=path))  # type: ignore[arg-type]
        else:
            on_missing(f"<{kind} {k}>")
        last = m.end()
    if text[last:].strip():
        parts.append(Part(kind="text", text=text[last:]))
    return parts


def warn_missing(where: str) -> Callable[[str], None]:
    """The on_missing callback: a logged warning naming the row."""

    def warn(placeholder: str) -> None:
        log.warning(
            "%s: no media supplied for %s; dropping the placeholder from the prompt", where, placeholder
        )

    return warn


def modality(parts: list[Part] | tuple[Part, ...]) -> str:
    """'text', 'image', 'audio', 'video', or 'combination' when kinds are mixed."""
    kinds = {p.kind for p in parts if p.kind != "text"}
    if not kinds:
        return "text"
    return kinds.pop() if len(kinds) == 1 else "combination"
