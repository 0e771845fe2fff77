"""`edgefarm serve` on a phone: the native runner in its serve mode (`driver.sh serve`: one model load,
requests one by one from JOB/requests, android_runner/native/edgefarm_runner.c `--serve`), its lines read
as a run's (android_native.py: each RESULT line -> the row, keyed by the sample number the request file
gives; a streamed request's PIECE lines -> its pieces, as the Python runner's). A request is the contract's
job line rendered into the runner's job file, one sample (conversation.py); a client gone mid-stream is a
cancel mark JOB/requests/<n>.cancel (serve_link.py), which stops the phone's answer (native/stream.c).
No hook runs per request on a phone: rows have no battery/thermal snapshots (docs/serve.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from android_runner.contract import JobItem

from ..devices.types import Exit
from ..errors import DeviceError
from . import android_native as native
from .android_choice import RunnerChoice
from .base import RunnerEvents, RunOptions, Staged

SERVE_LIFE_S = 30 * 86400.0  # the longest a serving driver lives before it is started again


def request_file(item: JobItem, staged: Staged) -> bytes:
    """One request as the native runner's job file: its number is the item's id (the engine's, 1..10^6)."""
    return native.render_job([(int(item.id), item)], staged.job)


def serve(device: Any, staged: Staged, choice: RunnerChoice, opts: RunOptions, events: RunnerEvents,
          parse_json: Callable[[str], dict], fatal: Callable[[str], None]) -> Exit:  # fmt: skip
    """Run the phone's driver in serve mode until events.stop; every line becomes an event (FATAL lines go
    to `fatal`: why a runner stopped before its model was ready, read as a run reads them)."""
    if choice.kind != "native":
        raise DeviceError("the upstream litert_lm_advanced_main binary cannot serve: it loads the model per "
                          "sample", where=device.name, fix="serve this phone with edgefarm's native runner")  # fmt: skip

    def on_line(line: str) -> None:
        head, _, rest = line.partition(" ")
        if head != "EDGEFARM":
            return
        what, _, rest = rest.partition(" ")
        if what == "READY":
            ready = parse_json(rest)
            if isinstance(ready.get("settings"), dict) and isinstance(staged.runner, dict):
                staged.runner["applied_settings"] = ready["settings"]
            events.ready(ready.get("init_ms"))
        elif what == "BEGIN" and rest.strip().isdigit():
            events.begin(rest.strip())
        elif what == "PIECE":  # a streamed request's piece of the answer, as it comes (native/stream.c)
            piece = parse_json(rest)
            if isinstance(piece.get("text"), str):
                events.piece(str(piece.get("id", "")), piece["text"])
        elif what == "RESULT":
            found = native.parse_line(rest)
            if found is not None:
                row = native.line_row(found, str(found["n"]), opts)
                events.result(native.with_snapshots(row, found, opts, {}))
        elif what == "NOTE":
            events.note(rest.strip())
        elif what == "FATAL":
            fatal(rest.strip())

    root = staged.root
    argv = ["sh", str(root / "driver" / "driver.sh"), "serve", str(staged.job),
            str(root / "bin" / choice.binary.name), str(root / "lib")]  # fmt: skip
    return device.run(argv, timeout_s=SERVE_LIFE_S, on_line=on_line, cancel=events.stop)
