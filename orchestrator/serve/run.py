"""`edgefarm serve` from its request to its end: the devices (the run's selection: inventory.py) or their
backend units (the run's matrix: devices/units.py), one engine per model, the session's run folder, the
terminal (serve/display.py), the HTTP server; on Ctrl-C uvicorn stops taking requests and lets those in
flight finish, then every engine drains and its runner is stopped, and the session's reports and database
row are written (serve/session.py)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich.markup import escape

from android_runner.contract import SampleResult

from ..devices.base import Device
from ..devices.units import backend_asked, split_unit, units_of
from ..inventory import load_inventory, select_usable
from ..models import ModelSummary, inspect_model
from ..progress import stderr_console
from ..runners.base import RunOptions
from .api import Bounds
from .app import Farm, build_app
from .display import ServeDisplay
from .engine import Engine
from .hold import DeviceHold
from .session import ServeSession

# uvicorn's C HTTP parser and event loop, named (not "auto": a missing one would fall back to the pure-Python
# h11 and asyncio in silence); what each saves per request: docs/benchmarks/serve.md
SERVER_IMPL = {"http": "httptools", "loop": "uvloop"}


@dataclass(frozen=True)
class ServeRequest:
    """The flags of `edgefarm serve` (cli/serve.py), checked."""

    device_spec: str = "all"
    inventory: Path | None = None
    model: Path = Path()
    backend: str | None = None  # one backend, or a list (`cpu,gpu`: every device as its units)
    threads: int | None = None
    max_num_tokens: int | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    api_key: str = ""
    allow_http: bool = False
    out: Path = Path("runs")
    db: str | None = None
    sample_timeout_s: float = 300.0
    bounds: Bounds = field(default_factory=Bounds)
    queue_max: int = 64

    def flags(self) -> dict[str, object]:
        """run.json's flags (the key never written)."""
        return {"devices": self.device_spec, "inventory": str(self.inventory or ""), "backend": self.backend,
                "threads": self.threads, "max_num_tokens": self.max_num_tokens, "host": self.host,
                "port": self.port, "api_key": "***" if self.api_key else None, "allow_http_images": self.allow_http,
                "sample_timeout_s": self.sample_timeout_s, "queue_max": self.queue_max,
                "bounds": vars(self.bounds)}  # fmt: skip


def engines_for(units: Sequence[Device], model: ModelSummary, request: ServeRequest, session: ServeSession,
                on_answered: Callable[[Engine, SampleResult], None]) -> list[Engine]:  # fmt: skip
    """One engine per model id: a device, or a backend unit of it (units_of: pixel-8@gpu is pixel-8/gpu),
    with the run's options for it (a unit's own backend); the units of one device share its turn and its
    run lock (serve/hold.py). Each request's row is recorded in the session before its answer goes out;
    `on_answered` (the terminal) follows."""
    base = RunOptions(run_id=session.run_id, sample_timeout_s=request.sample_timeout_s,
                      max_num_tokens=request.max_num_tokens)  # fmt: skip
    turns = {split_unit(d.name)[0]: threading.Lock() for d in units}
    holds = {split_unit(d.name)[0]: DeviceHold(d, session.run_id) for d in units}
    return [Engine(d, model, base.for_device(d, backend_asked(d, request.backend), request.threads),
                   session.folder(d.name), session.row, request.queue_max, turns[split_unit(d.name)[0]],
                   holds[split_unit(d.name)[0]], on_answered)
            for d in units]  # fmt: skip


def run_server(request: ServeRequest) -> int:
    """Serve until Ctrl-C; the exit status (0: stopped as asked)."""
    import uvicorn

    console = stderr_console()
    model = inspect_model(request.model)
    inventory = load_inventory(request.inventory)
    selection = select_usable(inventory, request.device_spec)
    for note in selection.notes:
        console.print(f"[yellow]note:[/] {escape(note)}")
    for u in selection.unusable:
        console.print(f"[yellow]not used:[/] {u.name} ({u.state}): {escape(u.problem)}")
    units = units_of(selection.devices, request.backend, inventory.entries)  # pixel-8@cpu, pixel-8@gpu, ...
    session = ServeSession(
        request.out, model, tuple(d.name for d in units), request.flags(), request.max_num_tokens
    )

    engines = engines_for(units, model, request, session, lambda engine, row: display.row(engine, row))
    display = ServeDisplay(console, engines)
    farm = Farm(
        {e.id: e for e in engines}, request.bounds, request.api_key, request.allow_http, session.run_id
    )
    console.print(f"serve {session.run_id}: {len(engines)} model(s) at http://{request.host}:{request.port}/v1 "
                  f"-> {session.run_dir}", highlight=False)  # fmt: skip
    for e in engines:
        console.print(f"  {e.id} ({e.device.kind})", highlight=False)
    console.print("Ctrl-C drains the requests in flight and stops every runner", highlight=False)
    display.start()
    for e in engines:
        e.start()
    config = uvicorn.Config(build_app(farm), host=request.host, port=request.port, log_level="warning",
                            access_log=False, lifespan="off", timeout_graceful_shutdown=request.sample_timeout_s,
                            **SERVER_IMPL)  # fmt: skip
    try:
        try:
            uvicorn.Server(config).run()
        except KeyboardInterrupt:  # uvicorn hands Ctrl-C back once it has stopped taking requests: asked for
            pass
    finally:
        display.flush()  # the lines of the requests answered so far come before this one
        console.print("stopping: draining each device and stopping its runner", highlight=False)
        for e in engines:
            e.stop()
        for hold in {id(e.hold): e.hold for e in engines if e.hold is not None}.values():
            hold.release()
        display.close()
        html = session.finish(engines, request.db, console)
        console.print(f"serve session {session.run_id}: {sum(map(len, session.rows.values()))} request(s) -> "
                      f"{html or session.run_dir}", highlight=False)  # fmt: skip
    return 0
