"""Progress of a farm run on stderr: rich bars on a terminal; elsewhere (CI, nohup, a pipe) one plain
line per device at a steady interval (samples done, rate, ETA), so a log shows the run moving.

The farm owns the loop: `start()`, then `update(...)` per device as often as it likes (the display
decides what to print), then `close()`. Plain lines are printed without rich's highlighting (which
would colour the digits of run ids and paths) and without wrapping (a pipe is not 80 columns wide).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

PLAIN_INTERVAL_S = 15.0
_STOPPED = ("collecting", "done", "failed", "interrupted")  # run.types.Phase values after the last sample


def stderr_console() -> Console:
    """stderr for logs and progress: no highlighting (it colours the digits of run ids and paths),
    and no wrapping at 80 columns when stderr is a pipe or a file (CI logs, nohup)."""
    console = Console(stderr=True, highlight=False)
    return console if console.is_terminal else Console(stderr=True, highlight=False, soft_wrap=True)


def stdout_console() -> Console:
    """Wide enough for the tables when stdout is a file or a pipe (rich would assume 80 columns); no
    highlighting, which would colour the digits of run ids and paths."""
    console = Console(highlight=False)
    return console if console.is_terminal else Console(width=160, highlight=False)


@dataclass
class _State:
    total: int | None  # None: open-ended (`edgefarm serve`'s requests)
    done: int = 0
    ok: int = 0
    failed: int = 0
    phase: str = ""
    current: str = ""
    first_sample_at: float | None = None  # when the device started running samples (rate, ETA)
    earlier: int = 0  # of `done`: rows a resumed run's earlier sessions finished (not in the rate)
    stopped_at: float | None = None  # when it stopped (done, failed, interrupted): its rate ends there
    ended: bool = False
    unit: str = "samples"  # what `done` counts: "runs" under --repeat/--warmup/--sustain


def rate_text(st: _State, now: float) -> str:
    """`3.10 samples/s, ETA 52 s` (`runs/s` when a sample runs more than once); '' before the first
    one is done. The rate counts this session's runs only: a resume's earlier rows are not (pure)."""
    end = st.stopped_at if st.stopped_at is not None else now  # over the device's own running time
    ran = st.done - st.earlier
    if st.first_sample_at is None or ran <= 0 or end <= st.first_sample_at:
        return ""
    rate = ran / (end - st.first_sample_at)
    text = f"{rate:.2f} {st.unit}/s"
    if st.total is not None and st.done < st.total and rate > 0:
        text += f", ETA {_duration((st.total - st.done) / rate)}"
    return text


def plain_line(name: str, st: _State, now: float, width: int = 16) -> str:
    """`pixel-8  40/200 samples (ok 38, failed 2) 3.1 samples/s, ETA 52 s, running IMG-040` (pure)."""
    of = f"/{st.total}" if st.total is not None else ""
    text = f"{name:<{width}} {st.done}{of} {st.unit} (ok {st.ok}, failed {st.failed})"
    rate = rate_text(st, now)
    if rate:
        text += f" {rate}"
    if st.phase:
        text += f", {st.phase}"
        if st.phase == "running" and st.current:
            text += f" {st.current}"
    return text


def _duration(s: float) -> str:
    s = round(s)
    return (
        f"{s} s"
        if s < 120
        else f"{s // 60} min {s % 60:02d} s"
        if s < 7200
        else f"{s // 3600} h {s % 3600 // 60:02d} min"
    )


class FarmProgress:
    """One display for all devices; picks bars or plain lines from the console (terminal or not)."""

    def __init__(
        self,
        console: Console,
        totals: Mapping[str, int | None],
        *,
        interval_s: float = PLAIN_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
        plain: bool | None = None,
        units: Mapping[str, str] | None = None,
    ) -> None:
        """`totals`: what each device will count (None: open-ended, no ETA); `units`: what that is,
        "samples" (the default), "runs" (measure.count_unit) or "requests" (serve), said in the rate."""
        self.console = console
        self.states = {
            name: _State(total, unit=(units or {}).get(name, "samples")) for name, total in totals.items()
        }
        self.interval_s = interval_s
        self.clock = clock
        self.plain = (not console.is_terminal) if plain is None else plain
        self._bars: Progress | None = None
        self._tasks: dict[str, int] = {}
        self._last_print = 0.0
        self._width = max([len(n) for n in totals] + [8])

    def start(self) -> None:
        if self.plain:
            self._last_print = self.clock()
            return
        self._bars = Progress(
            TextColumn("[bold]{task.fields[device]:<16}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[unit]}"),
            TextColumn("[green]ok {task.fields[ok]}[/] [red]failed {task.fields[failed]}[/]"),
            TextColumn("{task.fields[phase]} {task.fields[current]}"),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            console=self.console,
            transient=False,
            refresh_per_second=8,
        )
        self._bars.start()
        for name, st in self.states.items():
            self._tasks[name] = self._bars.add_task(
                "",
                total=st.total,
                device=name[:16],
                unit=st.unit,
                ok=0,
                failed=0,
                phase="",
                current="",
                rate="",
            )

    def update(
        self, name: str, done: int, ok: int, failed: int, phase: str, current: str = "", *, earlier: int = 0
    ) -> None:
        """`earlier`: of `done`, the runs a resumed run's earlier sessions finished (replayed first)."""
        st = self.states[name]
        now = self.clock()
        st.earlier = earlier
        if st.first_sample_at is None and (phase == "running" or done > earlier):
            st.first_sample_at = now
        if st.first_sample_at is not None and st.stopped_at is None and phase in _STOPPED:
            st.stopped_at = now  # a device that ran before others end: its rate is not diluted by their time
        st.done, st.ok, st.failed, st.phase, st.current = done, ok, failed, phase, current
        if self._bars is not None:
            self._bars.update(
                self._tasks[name],
                completed=done,
                ok=ok,
                failed=failed,
                phase=phase,
                current=current[:24] if phase == "running" else "",
                rate=rate_text(st, now),
            )
            return
        if phase in ("done", "failed") and not st.ended:  # a device that finishes says so at once
            st.ended = True
            self._print(name, st, now)
        elif now - self._last_print >= self.interval_s and name == next(iter(self.states)):
            self._last_print = now  # every interval: one line per device still going, in device order
            for n, s in self.states.items():
                if not s.ended:
                    self._print(n, s, now)

    def _print(self, name: str, st: _State, now: float) -> None:
        self.console.print(
            plain_line(name, st, now, self._width), markup=False, highlight=False, soft_wrap=True
        )

    def __enter__(self) -> FarmProgress:  # noqa: PYI034
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._bars is not None:
            self._bars.stop()
            self._bars = None
            return
        now = self.clock()
        for name, st in self.states.items():
            if not st.ended:
                st.ended = True
                self._print(name, st, now)
