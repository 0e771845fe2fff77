"""The HTTP side of `edgefarm serve` (Starlette): OpenAI's /v1/models, /v1/chat/completions and
/v1/completions over the farm's engines, each error in OpenAI's shape (docs/serve.md)."""

from __future__ import annotations

import asyncio
import hmac
import itertools
import json
import os
import shutil
import tempfile
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from android_runner.contract import JsonBoundError, SampleResult, loads_bounded

from .api import ApiError, Ask, Bounds, has_media, over, parse_chat, parse_completion
from .engine import Engine
from .responses import chunk_body, completion_body, row_error

BODY_MAX_DEPTH = 64  # JSON nesting of a request body


@dataclass
class Farm:
    """What the server serves: one engine per model id, the bounds, the key, the session's id."""

    engines: dict[str, Engine]
    bounds: Bounds = field(default_factory=Bounds)
    api_key: str = ""
    allow_http: bool = False
    run_id: str = ""
    _ids: itertools.count = field(default_factory=lambda: itertools.count(1))

    def next_id(self) -> str:
        return f"req-{next(self._ids):07d}"

    def engine(self, model: Any) -> Engine:
        found = self.engines.get(model) if isinstance(model, str) else None
        if found is None:
            raise ApiError(404, f"The model '{model}' does not exist: the models are {', '.join(self.engines)} "
                           "(GET /v1/models)", param="model", code="model_not_found")  # fmt: skip
        return found


def error_response(e: ApiError) -> JSONResponse:
    return JSONResponse(e.body(), status_code=e.status)


def model_object(engine: Engine) -> dict[str, Any]:
    """A /v1/models entry: OpenAI's fields, and the device's facts under `edgefarm`."""
    info = (
        asdict(engine.info)
        if engine.info is not None
        else {"name": engine.device.name, "kind": engine.device.kind}
    )
    facts = {"device": engine.device_name, "backend": engine.opts.backend, "state": engine.state,
             "reason": engine.reason or None, "runner": engine.runner.get("runner", ""),
             "runtime_version": engine.runner.get("runtime_version", ""), "init_ms": engine.init_ms,
             "model_loads": engine.loads, "served": engine.served, "waiting": engine.waiting,
             "model": engine.model.path.name, "model_sha256": engine.model.sha256, "info": info}  # fmt: skip
    return {"id": engine.id, "object": "model", "created": 0, "owned_by": "edgefarm", "edgefarm": facts}


def build_app(farm: Farm) -> Starlette:
    def guarded(handler: Callable[[Request], Any]) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            try:
                if farm.api_key:
                    given = request.headers.get("authorization", "")
                    if not hmac.compare_digest(given.encode(), f"Bearer {farm.api_key}".encode()):
                        raise ApiError(401, "a valid API key is required: Authorization: Bearer KEY "
                                       "(edgefarm serve --api-key / EDGEFARM_API_KEY)", code="invalid_api_key")  # fmt: skip
                return await handler(request)
            except ApiError as e:
                return error_response(e)

        return endpoint

    async def models(request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [model_object(e) for e in farm.engines.values()]})

    async def one_model(request: Request) -> Response:
        return JSONResponse(model_object(farm.engine(request.path_params["model"])))

    async def chat(request: Request) -> Response:
        return await _answer(farm, request, chat=True)

    async def completions(request: Request) -> Response:
        return await _answer(farm, request, chat=False)

    routes = [
        Route("/v1/models", guarded(models), methods=["GET"]),
        Route("/v1/models/{model:path}", guarded(one_model), methods=["GET"]),
        Route("/v1/chat/completions", guarded(chat), methods=["POST"]),
        Route("/v1/completions", guarded(completions), methods=["POST"]),
    ]
    return Starlette(routes=routes)


async def read_body(request: Request, bounds: Bounds) -> dict[str, Any]:
    """The JSON body, refused past body_max_bytes (413) before it is all read."""
    limit = bounds.body_max_bytes
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise over(f"the request body ({declared} bytes)", limit, "bytes", "--body-max-mb", status=413)
    data = bytearray()
    async for piece in request.stream():
        data += piece
        if len(data) > limit:
            raise over("the request body", limit, "bytes", "--body-max-mb", status=413)
    try:
        body = loads_bounded(bytes(data), limit, BODY_MAX_DEPTH)
    except JsonBoundError as e:
        raise ApiError(400, f"the request body is {e}", code="bound_exceeded") from e
    except ValueError as e:
        raise ApiError(400, f"the request body is not JSON: {e}") from e
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    return body


async def _answer(farm: Farm, request: Request, chat: bool) -> Response:
    body = await read_body(request, farm.bounds)
    engine = farm.engine(body.get("model"))
    rid = farm.next_id()
    folder = Path(tempfile.gettempdir()) / f"edgefarm-serve-{os.getpid()}-{rid}"  # made only for media
    handed = False
    try:
        if chat and has_media(body):  # decoded into files (or fetched): on a worker thread, not the loop
            ask = await anyio.to_thread.run_sync(
                parse_chat, body, farm.bounds, folder / "in", rid, farm.allow_http
            )
        elif chat:
            ask = parse_chat(body, farm.bounds, folder / "in", rid, farm.allow_http)
        else:
            ask = parse_completion(body, farm.bounds, rid)
        if (err := engine.unavailable()) is not None:
            raise err
        events = _Events()
        cancelled = threading.Event()
        worker = threading.Thread(target=_ask, args=(engine, ask, folder, events, cancelled), daemon=True,
                                  name=f"request:{rid}")  # fmt: skip
        worker.start()
        handed = True
        first = await _next(events)  # the first piece, or the end: an error before any answer is its status
        if not ask.stream:
            while first[0] == "piece":
                first = await _next(events)
            row = _end(engine, first)
            return JSONResponse(
                completion_body(f"{'chatcmpl' if chat else 'cmpl'}-{rid}", engine, ask, row, farm.run_id)
            )
        if first[0] != "piece":
            row = _end(engine, first)  # raises for a row without an answer
        return StreamingResponse(_events(farm, engine, ask, rid, first, events, cancelled),
                                 media_type="text/event-stream", headers={"Cache-Control": "no-cache"})  # fmt: skip
    finally:
        if not handed:
            shutil.rmtree(folder, ignore_errors=True)


def _ask(engine: Engine, ask: Ask, folder: Path, events: _Events, cancelled: threading.Event) -> None:
    """The request on its device (a thread: the device's queue blocks); its folder goes afterwards."""
    try:
        engine.ask(ask, folder, events, cancelled)
    except ApiError as e:
        events.put(("error", e))
    except Exception as e:  # noqa: BLE001 - the request's answer, never a hung client
        events.put(("error", ApiError(500, f"edgefarm serve: {type(e).__name__}: {e}")))
    finally:
        events.put(("end", None))
        shutil.rmtree(folder, ignore_errors=True)


class _Events:
    """A request's events from the device's thread to the request's task: `put` from any thread, `get`
    awaited on the server's loop (no polling: the event wakes the task)."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

    def put(self, event: tuple[str, Any]) -> None:
        self._loop.call_soon_threadsafe(self._queue.put_nowait, event)

    async def get(self) -> tuple[str, Any]:
        return await self._queue.get()


async def _next(events: _Events) -> tuple[str, Any]:
    return await events.get()


def _end(engine: Engine, event: tuple[str, Any]) -> SampleResult:
    """The request's row from its last event; every other end is raised as the request's error."""
    kind, value = event
    if kind == "result":
        err = row_error(engine, value)
        if err is not None:
            raise err
        return value
    if kind == "lost":
        raise ApiError(503, f"{engine.id} was lost during the request: {value}; the device is marked down and "
                       "comes back when it answers", code="device_lost")  # fmt: skip
    if kind == "error":
        raise value
    raise ApiError(500, "edgefarm serve: the request ended without an answer")


async def _events(farm: Farm, engine: Engine, ask: Ask, rid: str, first: tuple[str, Any], events: _Events,
                  cancelled: threading.Event) -> AsyncIterator[str]:  # fmt: skip
    """Server-sent events: each piece as a chunk, then the last chunk (finish reason, usage, edgefarm)
    and [DONE]; an end without an answer is an `error` event. A client gone stops the answer."""
    cid = f"{'chatcmpl' if ask.chat else 'cmpl'}-{rid}"
    finished = pieces = False
    event = first
    try:
        while True:
            kind, value = event
            if kind == "piece":
                pieces = True
                yield _sse(chunk_body(cid, engine, ask, value))
            else:
                try:
                    row = _end(engine, event)
                except ApiError as e:
                    yield _sse(e.body())
                else:
                    # answered whole (a runtime without the streaming call): the answer as one piece
                    if not pieces and row.output:
                        yield _sse(chunk_body(cid, engine, ask, row.output))
                    yield _sse(chunk_body(cid, engine, ask, None, row, farm.run_id))
                yield "data: [DONE]\n\n"
                finished = True
                return
            event = await _next(events)
    finally:
        if not finished:
            cancelled.set()


def _sse(body: dict[str, Any]) -> str:
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"
