"""`edgefarm serve` on the terminal: the run's own progress display (orchestrator/progress.py FarmProgress),
one live row per model (requests answered, ok/failed, its state, the rate), refreshed from the engines; a
request that fails and a model that comes up or goes down are lines above it. When stderr is not a terminal
(a log, CI, nohup) there is no live row: one plain line per request and per change of a model's state.

Lines are printed by the display's own thread, at most REFRESH_S after their request ended (and all of
them at `flush()` / `close()`), not by the runner's line reader that hands the answer to the server: a
console print there held the interpreter while the server's loop was waking to send that answer
(docs/benchmarks/serve.md)."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape

from android_runner.contract import SampleResult

from ..progress import FarmProgress
from .engine import Engine

REFRESH_S = 0.5  # how often the live rows read the engines' state


def request_line(engine: Engine, row: SampleResult) -> str:
    """`pixel-8/gpu req-0000003: ok TTFT 41 ms, decode 22.0 tok/s` (the error's first words when it failed)."""
    figures = f"TTFT {row.ttft_ms:.0f} ms, decode {row.decode_tps or 0:.1f} tok/s" if row.ttft_ms else ""
    said = (row.error or "").splitlines()[0][:120] if row.error else ""
    return " ".join(x for x in (f"{engine.id} {row.id}: {row.status}", figures, said) if x)


def state_line(engine: Engine) -> str:
    """`pixel-8/gpu ready (engine loaded in 812 ms)` or `s24/gpu down: <reason>`."""
    if engine.state == "ready":
        return f"{engine.id} ready" + (
            f" (engine loaded in {engine.init_ms:.0f} ms)" if engine.init_ms else ""
        )
    return f"{engine.id} {engine.state}" + (f": {engine.reason[:300]}" if engine.reason else "")


class ServeDisplay:
    """The session's terminal: `start()`, `row(engine, row)` per finished request, `close()`."""

    def __init__(self, console: Console, engines: Sequence[Engine], *, live: bool | None = None) -> None:
        self.console, self.engines = console, tuple(engines)
        self.live = console.is_terminal if live is None else live
        self.counts = {e.id: [0, 0] for e in engines}  # answered ok, failed
        self._states = {e.id: "" for e in engines}  # the last state said
        self._lines: list[str] = []  # said, not printed yet (the display's thread prints them, in order)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._progress = (
            FarmProgress(
                console, dict.fromkeys(self.counts), units=dict.fromkeys(self.counts, "requests"), plain=False
            )
            if self.live
            else None
        )
        self._thread = threading.Thread(target=self._refresh_loop, name="serve:display", daemon=True)

    def start(self) -> None:
        if self._progress is not None:
            self._progress.start()
        self._thread.start()

    def row(self, engine: Engine, row: SampleResult) -> None:
        with self._lock:
            self.counts[engine.id][0 if row.status == "ok" else 1] += 1
            if not self.live or row.status != "ok":  # live: the row counts it; a failure is said too
                self._say(request_line(engine, row))
            self._update(engine)

    def _say(self, text: str) -> None:
        self._lines.append(text)

    def flush(self) -> None:
        """Print every line said so far."""
        with self._lock:
            lines, self._lines = self._lines, []
            for text in lines:
                self.console.print(escape(text), highlight=False, soft_wrap=True)

    def _update(self, engine: Engine) -> None:
        """A model's row (live) and, when its state changed to ready or down, its line."""
        if engine.state != self._states[engine.id] and engine.state in ("ready", "down"):
            self._say(state_line(engine))
        self._states[engine.id] = engine.state
        if self._progress is not None:
            ok, failed = self.counts[engine.id]
            busy = engine.waiting > 0 and engine.state == "ready"
            phase = f"answering, {engine.waiting} asked" if busy else engine.state
            self._progress.update(engine.id, ok + failed, ok, failed, phase)

    def _refresh_loop(self) -> None:
        while not self._stop.wait(REFRESH_S):
            with self._lock:
                for e in self.engines:
                    self._update(e)
            self.flush()

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        self.flush()
        if self._progress is not None:
            self._progress.close()
