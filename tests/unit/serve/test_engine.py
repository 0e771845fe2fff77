"""A request's row on the host (serve/engine.py): recorded in the session before its answer goes to the
client; the terminal's line after, off the answer's path."""

from __future__ import annotations

import threading
from pathlib import Path

from android_runner.contract import SampleResult
from orchestrator.devices.local import LocalDevice
from orchestrator.models import ModelSummary
from orchestrator.serve.engine import Engine
from orchestrator.serve.run import ServeRequest, engines_for
from orchestrator.serve.session import ServeSession

MODEL = ModelSummary(path=Path("/models/m.litertlm"), size_bytes=10, sha256="a" * 64, vision=False, audio=False,
                     max_context_tokens=4096)  # fmt: skip


def test_the_row_is_recorded_before_the_answer_goes_out_and_the_terminal_after(tmp_path):
    session = ServeSession(tmp_path, MODEL, ("this-host",), ServeRequest().flags(), None)
    said: list[tuple[str, list]] = []
    answers: list[tuple[str, object]] = []

    class Client:  # the request's events (serve/app.py's queue to the loop)
        def put(self, event: tuple[str, object]) -> None:
            answers.append(event)

    def recorded(engine: Engine, row: SampleResult) -> None:
        session.row(engine, row)
        said.append(("recorded", list(answers)))

    (engine,) = engines_for((LocalDevice(),), MODEL, ServeRequest(), session,
                            lambda e, row: said.append(("terminal", list(answers))))  # fmt: skip
    engine.on_row = recorded
    engine.folder.mkdir(parents=True)  # made when the engine stages
    done = threading.Event()
    engine._inflight = ("7", Client(), done, "req-0000007")
    engine._on_result(SampleResult(id="7", status="ok", output="pong"))
    row = SampleResult(id="req-0000007", status="ok", output="pong")
    assert said == [("recorded", []), ("terminal", [("result", row)])] and done.is_set()
    assert (session.folder("this-host") / "results.jsonl").read_text() == row.to_json() + "\n"


def test_the_server_runs_on_uvicorns_c_parser_and_loop():
    """Named, not "auto": a missing one is an error at start, not a silent fall back to h11 and asyncio."""
    import uvicorn

    from orchestrator.serve.run import SERVER_IMPL

    config = uvicorn.Config(lambda scope, receive, send: None, **SERVER_IMPL)
    config.load()
    assert config.http_protocol_class.__name__ == "HttpToolsProtocol" and config.loop == "uvloop"
