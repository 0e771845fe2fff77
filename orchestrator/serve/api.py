"""OpenAI's request bodies -> what a device is asked (`Ask`), every bound checked, errors in OpenAI's shape.

A request becomes the run's own records: a `Sample` (its system message, its last user message as the
one turn, media as files under the request's own folder, written here from data: URLs, never a path the
client names) and the messages before it as history. jobs.py turns that into the contract's job line
exactly as for `edgefarm run`, so an answer here is the answer `run` gets for the same sample.
Bounds (docs/serve.md): a body over `body_max_bytes` or a media item over `media_max_bytes` is 413, any
other count or size over its bound 400, each naming the bound and the flag that moves it.
"""

from __future__ import annotations

import base64
import binascii
import re
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..datasets.types import Part, Sample, Turn

GREEDY = {"top_k": 1, "seed": 0}  # no temperature given, or 0: greedy, as `edgefarm run`
SAMPLING_TOP_K = 64  # temperature > 0: the runtime samples from the 64 likeliest tokens (then top_p)
IMAGE_TYPES = {"image/png": ".png", "image/jpeg": ".jpg", "image/jpg": ".jpg", "image/webp": ".webp",
               "image/gif": ".gif", "image/bmp": ".bmp"}  # fmt: skip
AUDIO_FORMATS = {"wav": ".wav", "mp3": ".mp3", "flac": ".flac", "ogg": ".ogg"}
IMAGE_PART, AUDIO_PART = "image_url", "input_audio"  # the content parts that are files on the device
MEDIA_PARTS = (IMAGE_PART, AUDIO_PART)
DATA_URL = re.compile(r"data:(?P<mime>[\w.+-]+/[\w.+-]+)?(?:;[\w=.+-]+)*?;base64,(?P<data>.*)", re.DOTALL)


@dataclass(frozen=True)
class Bounds:
    """What one request may hold (each a flag of `edgefarm serve`, itself bounded)."""

    body_max_bytes: int = 32 * 2**20
    media_max_bytes: int = 16 * 2**20  # one image or audio clip, decoded
    messages_max: int = 64
    media_max: int = 8  # images and audio clips in one request
    max_tokens_max: int = 4096  # the largest max_tokens a request may ask
    text_max_chars: int = 200_000  # all text of one request
    default_max_tokens: int = 128  # a request without max_tokens (android_runner/status.py's default)


class ApiError(Exception):
    """An error answered in OpenAI's shape: {"error": {"message", "type", "param", "code"}}."""

    def __init__(
        self, status: int, message: str, *, param: str | None = None, code: str | None = None
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.param, self.code = status, message, param, code

    @property
    def type(self) -> str:
        return {400: "invalid_request_error", 401: "authentication_error", 404: "invalid_request_error",
                413: "invalid_request_error", 503: "server_error", 504: "server_error"}.get(self.status, "server_error")  # fmt: skip

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


def over(
    what: str, limit: int, unit: str, flag: str, status: int = 400, param: str | None = None
) -> ApiError:
    """The error of a request over one of its bounds: the bound named, and the flag that moves it."""
    return ApiError(status, f"{what} is over the bound of {limit} {unit} (edgefarm serve {flag})",
                    param=param, code="bound_exceeded")  # fmt: skip


@dataclass(frozen=True)
class Ask:
    """What one request asks of a device: the sample (one turn), the history before it, and how."""

    model: str
    sample: Sample
    history_roles: tuple[str, ...] = ()  # the roles of sample.turns[:-1]: the messages before the last
    max_tokens: int = 128
    sampler: Mapping[str, Any] = field(default_factory=lambda: dict(GREEDY))
    stream: bool = False
    chat: bool = True  # False: /v1/completions (a plain prompt)
    include_usage: bool = False  # stream_options.include_usage: a last chunk with the usage
    fidelity: bool = False  # the run's --fidelity pass on the sample's reference (the lm-eval plugin's scores)


def _int(body: Mapping[str, Any], name: str, low: int, high: int, flag: str = "") -> int | None:
    v = body.get(name)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise ApiError(400, f"'{name}' must be a whole number", param=name)
    if v > high and flag:
        raise over(f"'{name}' {v}", high, "tokens", flag, param=name)
    if not low <= v <= high:
        raise ApiError(400, f"'{name}' must be in {low}..{high}, not {v}", param=name)
    return v


def _number(body: Mapping[str, Any], name: str, low: float, high: float) -> float | None:
    v = body.get(name)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not low <= v <= high:
        raise ApiError(400, f"'{name}' must be a number in {low:g}..{high:g}", param=name)
    return float(v)


def common(body: Mapping[str, Any], bounds: Bounds) -> dict[str, Any]:
    """The fields chat and completions share: model, n, max_tokens, sampler, stream."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise ApiError(
            400, "'model' is required: a device id from GET /v1/models (e.g. pixel-8/cpu)", param="model"
        )
    n = _int(body, "n", 1, 1_000_000)
    if n is not None and n != 1:
        raise ApiError(400, f"n={n}: edgefarm serve gives one answer per request (one device, one engine); "
                       "send the request n times", param="n", code="unsupported")  # fmt: skip
    tokens = _int(body, "max_completion_tokens", 1, bounds.max_tokens_max, "--max-tokens-max")
    if tokens is None:
        tokens = _int(body, "max_tokens", 1, bounds.max_tokens_max, "--max-tokens-max")
    temperature = _number(body, "temperature", 0.0, 2.0)
    top_p = _number(body, "top_p", 0.0, 1.0)
    seed = _int(body, "seed", -(2**31), 2**31 - 1)
    if temperature:  # sampling: the runtime's top-k/top-p sampler with the client's temperature and seed
        sampler = {"top_k": SAMPLING_TOP_K, "top_p": 0.95 if top_p is None else top_p,
                   "temperature": temperature, "seed": seed or 0}  # fmt: skip
    else:
        sampler = {**GREEDY, "seed": seed or 0}
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise ApiError(400, "'stream' must be true or false", param="stream")
    options = body.get("stream_options") or {}
    usage = bool(options.get("include_usage")) if isinstance(options, Mapping) else False
    for name in ("tools", "functions", "response_format", "logprobs", "best_of", "echo", "suffix"):
        if body.get(name) not in (None, False, [], {"type": "text"}):
            raise ApiError(400, f"'{name}' is not supported by edgefarm serve (docs/serve.md)",
                           param=name, code="unsupported")  # fmt: skip
    return {"model": model, "max_tokens": tokens or bounds.default_max_tokens, "sampler": sampler,
            "stream": stream, "include_usage": usage}  # fmt: skip


class _Media:
    """The request's media, decoded into its own folder under neutral names (never the client's)."""

    def __init__(self, folder: Path, bounds: Bounds, allow_http: bool) -> None:
        self.folder, self.bounds, self.allow_http = folder, bounds, allow_http
        self.count = 0

    def save(self, kind: str, data: bytes, suffix: str, param: str) -> Part:
        self.count += 1
        if self.count > self.bounds.media_max:
            raise over("the number of images and audio clips", self.bounds.media_max, "items", "--media-max",
                       param=param)  # fmt: skip
        if len(data) > self.bounds.media_max_bytes:
            raise over(f"{param} ({len(data)} bytes)", self.bounds.media_max_bytes, "bytes", "--media-max-mb",
                       status=413, param=param)  # fmt: skip
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{self.count}{suffix}"
        path.write_bytes(data)
        return Part(kind, path=path)

    def image(self, url: Any, param: str) -> Part:
        if not isinstance(url, str):
            raise ApiError(400, f"{param} must be a URL string", param=param)
        m = DATA_URL.fullmatch(url.strip())
        if m:
            suffix = IMAGE_TYPES.get((m["mime"] or "").lower())
            if suffix is None:
                raise ApiError(400, f"{param}: image type {m['mime']!r} is not one of {', '.join(IMAGE_TYPES)}",
                               param=param)  # fmt: skip
            return self.save("image", _b64(m["data"], param, self.bounds), suffix, param)
        if url.startswith(("http://", "https://")):
            if not self.allow_http:
                raise ApiError(400, f"{param}: only data: URLs are taken (edgefarm serve --allow-http-images "
                               "lets it fetch http(s) URLs)", param=param)  # fmt: skip
            return self.save("image", *self._fetch(url, param), param)
        raise ApiError(400, f"{param}: a data: URL (data:image/png;base64,...) is required; no request can "
                       "name a file on the host", param=param)  # fmt: skip

    def _fetch(self, url: str, param: str) -> tuple[bytes, str]:
        try:
            with urllib.request.urlopen(url, timeout=20) as r:
                data = r.read(self.bounds.media_max_bytes + 1)
                mime = (r.headers.get_content_type() or "").lower()
        except OSError as e:
            raise ApiError(400, f"{param}: cannot fetch {url[:200]}: {e}", param=param) from e
        return data, IMAGE_TYPES.get(mime, ".img")

    def audio(self, spec: Any, param: str) -> Part:
        if not isinstance(spec, Mapping) or not isinstance(spec.get("data"), str):
            raise ApiError(400, f'{param} must be {{"data": BASE64, "format": "wav"}}', param=param)
        fmt = str(spec.get("format") or "wav").lower()
        if fmt not in AUDIO_FORMATS:
            raise ApiError(400, f"{param}.format must be one of {', '.join(AUDIO_FORMATS)}", param=param)
        return self.save("audio", _b64(spec["data"], param, self.bounds), AUDIO_FORMATS[fmt], param)


def _b64(text: str, param: str, bounds: Bounds) -> bytes:
    if len(text) > bounds.media_max_bytes * 4 // 3 + 4:
        raise over(f"{param}", bounds.media_max_bytes, "bytes", "--media-max-mb", status=413, param=param)
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as e:
        raise ApiError(400, f"{param}: not valid base64 ({e})", param=param) from e


def _parts(content: Any, media: _Media, param: str, role: str) -> tuple[Part, ...]:
    if isinstance(content, str):
        return (Part("text", text=content),)
    if not isinstance(content, Sequence):
        raise ApiError(400, f"{param} must be a string or a list of content parts", param=param)
    parts = []
    for k, c in enumerate(content):
        at = f"{param}[{k}]"
        kind = c.get("type") if isinstance(c, Mapping) else None
        if kind == "text" and isinstance(c.get("text"), str):
            parts.append(Part("text", text=c["text"]))
        elif kind == IMAGE_PART and role == "user":
            spec = c.get("image_url")
            parts.append(
                media.image(spec.get("url") if isinstance(spec, Mapping) else spec, f"{at}.image_url")
            )
        elif kind == AUDIO_PART and role == "user":
            parts.append(media.audio(c.get("input_audio"), f"{at}.input_audio"))
        else:
            raise ApiError(400, f"{at}: a {role} message takes text" + (", image_url and input_audio parts"
                           if role == "user" else " parts only"), param=at)  # fmt: skip
    return tuple(parts)


def has_media(body: Mapping[str, Any]) -> bool:
    """Whether a chat body has an image or audio part: only those make parse_chat do file (or network) I/O,
    which the server keeps off its event loop; text alone is parsed in place."""
    messages = body.get("messages")
    return isinstance(messages, list) and any(
        isinstance(m, Mapping)
        and isinstance(m.get("content"), list)
        and any(isinstance(c, Mapping) and c.get("type") in MEDIA_PARTS for c in m["content"])
        for m in messages
    )


def parse_chat(body: Mapping[str, Any], bounds: Bounds, folder: Path, request_id: str,
               allow_http: bool = False) -> Ask:  # fmt: skip
    """POST /v1/chat/completions -> Ask; media written under `folder` (the request's own)."""
    args = common(body, bounds)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ApiError(400, "'messages' must be a non-empty list", param="messages")
    if len(messages) > bounds.messages_max:
        raise over(f"'messages' ({len(messages)})", bounds.messages_max, "messages", "--messages-max",
                   param="messages")  # fmt: skip
    media = _Media(folder, bounds, allow_http)
    system: list[str] = []
    turns: list[tuple[str, tuple[Part, ...]]] = []
    for i, m in enumerate(messages):
        at = f"messages[{i}]"
        role = m.get("role") if isinstance(m, Mapping) else None
        if role in ("system", "developer"):
            if turns:
                raise ApiError(400, f"{at}: a system message is taken only before the first user message",
                               param=at)  # fmt: skip
            system.append("".join(p.text for p in _parts(m.get("content"), media, f"{at}.content", "system")))
        elif role in ("user", "assistant"):
            if role == "assistant" and m.get("tool_calls"):
                raise ApiError(400, f"{at}: tool calls are not supported by edgefarm serve", param=at)
            turns.append((role, _parts(m.get("content") or "", media, f"{at}.content", role)))
        else:
            raise ApiError(
                400, f"{at}.role must be system, developer, user or assistant, not {role!r}", param=at
            )
    if not turns or turns[-1][0] != "user":
        raise ApiError(
            400, "the last message must be the user's (the one the device answers)", param="messages"
        )
    chars = sum(len(s) for s in system) + sum(len(p.text) for _, ps in turns for p in ps)
    if chars > bounds.text_max_chars:
        raise over(f"the request's text ({chars} characters)", bounds.text_max_chars, "characters",
                   "--text-max-chars", param="messages")  # fmt: skip
    sample = _sample(request_id, tuple(Turn(ps) for _, ps in turns), "\n\n".join(system) or None, args)
    return Ask(sample=sample, history_roles=tuple(r for r, _ in turns[:-1]), chat=True, **args)


def parse_completion(body: Mapping[str, Any], bounds: Bounds, request_id: str) -> Ask:
    """POST /v1/completions -> Ask: the prompt as one user turn (the model's chat template applies)."""
    args = common(body, bounds)
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
        prompt = prompt[0]
    if not isinstance(prompt, str):
        raise ApiError(400, "'prompt' must be one string (one answer per request)", param="prompt")
    if len(prompt) > bounds.text_max_chars:
        raise over(f"'prompt' ({len(prompt)} characters)", bounds.text_max_chars, "characters",
                   "--text-max-chars", param="prompt")  # fmt: skip
    sample = _sample(request_id, (Turn((Part("text", text=prompt),)),), None, args)
    return Ask(sample=sample, chat=False, **args)


def _sample(request_id: str, turns: tuple[Turn, ...], system: str | None, args: Mapping[str, Any]) -> Sample:
    kinds = sorted({p.kind for t in turns for p in t.parts if p.kind != "text"})
    return Sample(id=request_id, modality="+".join(["text", *kinds]), task="serve", turns=turns, reference="",
                  references=(), format="serve", system=system, max_output_tokens=args["max_tokens"])  # fmt: skip
