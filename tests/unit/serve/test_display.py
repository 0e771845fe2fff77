"""`edgefarm serve` on the terminal (serve/display.py): the run's progress display, a live row per model on a
terminal; plain lines (each request, each model that comes up or goes down) when stderr is not one."""

from __future__ import annotations

import io
import time
from pathlib import Path

from rich.console import Console

from android_runner.contract import SampleResult
from orchestrator.devices.adb import AdbDevice
from orchestrator.devices.units import units_of
from orchestrator.models import ModelSummary
from orchestrator.progress import _State as State
from orchestrator.progress import plain_line
from orchestrator.serve.display import ServeDisplay
from orchestrator.serve.run import ServeRequest, engines_for
from orchestrator.serve.session import ServeSession

MODEL = ModelSummary(path=Path("/m.litertlm"), size_bytes=1, sha256="b" * 64, vision=False, audio=False,
                     max_context_tokens=64)  # fmt: skip
OK = SampleResult(id="req-0000001", status="ok", output="pong", ttft_ms=41.0, decode_tps=22.0)
FAILED = SampleResult(id="req-0000002", status="timeout", error="no answer within 300 s")


def _engines(tmp_path: Path):
    request = ServeRequest(backend="cpu,gpu")
    units = units_of((AdbDevice("pixel-8", "S1"),), request.backend, ())
    session = ServeSession(tmp_path, MODEL, tuple(d.name for d in units), request.flags(), None)
    return engines_for(units, MODEL, request, session, lambda engine, row: None)


def test_plain_lines_say_each_request_and_each_change_of_state(tmp_path):
    buf = io.StringIO()
    cpu, gpu = _engines(tmp_path)
    d = ServeDisplay(Console(file=buf, width=60), (cpu, gpu))
    assert not d.live  # a StringIO is not a terminal, as under CI, nohup or a pipe
    cpu.state, cpu.init_ms = "ready", 812.0
    gpu.state, gpu.reason = "down", "the gpu backend is not available on this device (gpu_unavailable)"
    d.row(cpu, OK)
    d.row(cpu, FAILED)
    d.close()
    assert buf.getvalue().splitlines() == [
        "pixel-8/cpu req-0000001: ok TTFT 41 ms, decode 22.0 tok/s",
        "pixel-8/cpu ready (engine loaded in 812 ms)",
        "pixel-8/cpu req-0000002: timeout no answer within 300 s",
    ]  # unwrapped at 60 columns; gpu's line comes with its first refresh (not started here)
    assert d.counts == {"pixel-8/cpu": [1, 1], "pixel-8/gpu": [0, 0]}


def test_a_terminal_gets_a_live_row_per_model_and_only_failures_as_lines(tmp_path):
    buf = io.StringIO()
    cpu, gpu = _engines(tmp_path)
    d = ServeDisplay(Console(file=buf, force_terminal=True, width=160, color_system=None), (cpu, gpu))
    assert d.live
    d.start()
    cpu.state = "ready"
    d.row(cpu, OK)
    d.row(cpu, OK)
    d.row(cpu, FAILED)
    d.close()
    out = buf.getvalue()
    assert "pixel-8/cpu" in out and "pixel-8/gpu" in out and "requests" in out
    assert "req-0000002: timeout" in out and "req-0000001" not in out  # an ok request is counted in its row
    assert "3/?" in out and "ok 2" in out and "failed 1" in out


def test_an_open_ended_count_has_no_total_and_no_eta():
    st = State(total=None, done=4, ok=4, first_sample_at=0.0, unit="requests")
    assert (
        plain_line("pixel-8/gpu", st, 2.0, 12) == "pixel-8/gpu  4 requests (ok 4, failed 0) 2.00 requests/s"
    )


def test_lines_are_printed_by_the_displays_thread_not_by_the_caller_that_hands_over_the_answer(tmp_path):
    """`row()` runs on the runner's line reader just as the server's loop wakes to send that answer: it only
    keeps the line; the display's thread (each refresh), `flush()` and `close()` print them, in order."""
    buf = io.StringIO()
    cpu, gpu = _engines(tmp_path)
    d = ServeDisplay(Console(file=buf, width=60), (cpu, gpu))
    cpu.state = "ready"
    d.row(cpu, OK)
    assert buf.getvalue() == ""
    d.flush()
    assert buf.getvalue().splitlines() == [
        "pixel-8/cpu req-0000001: ok TTFT 41 ms, decode 22.0 tok/s",
        "pixel-8/cpu ready",
    ]
    d.start()
    d.row(cpu, FAILED)
    deadline = time.monotonic() + 30
    while "req-0000002" not in buf.getvalue():  # the next refresh prints it (REFRESH_S)
        assert time.monotonic() < deadline, buf.getvalue()
        time.sleep(0.05)
    d.close()
    assert buf.getvalue().splitlines()[2:] == ["pixel-8/cpu req-0000002: timeout no answer within 300 s"]
