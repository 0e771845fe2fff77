"""The farm's progress display without a terminal: plain lines per device at a steady interval."""

from __future__ import annotations

import io

from rich.console import Console

from orchestrator.progress import FarmProgress


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def _console(buf: io.StringIO, terminal: bool = False) -> Console:
    return Console(
        file=buf, force_terminal=terminal, width=40, color_system="truecolor" if terminal else None
    )


def test_plain_lines_at_a_steady_interval_with_rate_and_eta():
    buf, clock = io.StringIO(), Clock()
    p = FarmProgress(_console(buf), {"pixel-8-pro-long-name": 100, "pi-5": 100}, interval_s=10, clock=clock)
    assert p.plain  # a StringIO is not a terminal, as under CI, nohup or a pipe
    p.start()
    p.update("pixel-8-pro-long-name", 0, 0, 0, "running", "IMG-001")
    p.update("pi-5", 0, 0, 0, "staging")
    assert buf.getvalue() == ""  # nothing before the first interval
    clock.t += 10
    p.update("pixel-8-pro-long-name", 20, 19, 1, "running", "IMG-021")
    p.update("pi-5", 0, 0, 0, "loading model")
    lines = buf.getvalue().splitlines()
    assert lines == [
        "pixel-8-pro-long-name 20/100 samples (ok 19, failed 1) 2.00 samples/s, ETA 40 s, running IMG-021",
        "pi-5                  0/100 samples (ok 0, failed 0), staging",
    ]  # one unwrapped line per device (console width 40), the run id / path digits not coloured
    clock.t += 3
    p.update("pixel-8-pro-long-name", 26, 25, 1, "running", "IMG-027")
    assert len(buf.getvalue().splitlines()) == 2  # not again before the interval
    p.update("pi-5", 5, 5, 0, "failed")
    assert buf.getvalue().splitlines()[-1].startswith("pi-5                  5/100 samples (ok 5, failed 0)")
    p.close()
    assert buf.getvalue().splitlines()[-1].startswith("pixel-8-pro-long-name 26/100")
    assert "\x1b[" not in buf.getvalue()


def test_bars_on_a_terminal():
    buf, clock = io.StringIO(), Clock()
    console = Console(file=buf, force_terminal=True, width=120, color_system=None)
    p = FarmProgress(console, {"pixel-8": 4}, clock=clock)
    assert not p.plain
    p.start()
    p.update("pixel-8", 4, 4, 0, "done")
    p.close()
    assert "4/4" in buf.getvalue() and "samples/s" not in buf.getvalue()


def test_bars_on_a_terminal_show_the_rate_and_eta_of_what_they_count():
    """A terminal's bars carry the rate and ETA the plain lines have; a device whose samples run more
    than once (--repeat) counts runs and says runs/s."""
    buf, clock = io.StringIO(), Clock()
    console = Console(file=buf, force_terminal=True, width=160, color_system=None)
    p = FarmProgress(console, {"pixel-8": 40, "pi-5": 120}, clock=clock, units={"pi-5": "runs"})
    p.start()
    p.update("pixel-8", 0, 0, 0, "running", "S-1")
    p.update("pi-5", 0, 0, 0, "running", "S-1")
    clock.t += 10
    p.update("pixel-8", 10, 10, 0, "running", "S-11")
    p.update("pi-5", 30, 30, 0, "running", "S-11")
    p._bars.refresh()
    p.close()
    out = buf.getvalue()
    assert "1.00 samples/s, ETA 30 s" in out and "3.00 runs/s, ETA 30 s" in out


def test_devices_one_after_another_are_each_rated_over_their_own_running_time():
    """issue 41: two devices in one lane (this host's CPU shared): the first's rate kept falling while the
    second ran (done / time since its start), so the live rates ranked the devices opposite to the table."""
    buf, clock = io.StringIO(), Clock()
    console = Console(file=buf, force_terminal=True, width=160, color_system=None)
    p = FarmProgress(console, {"host-t1": 40, "host-t2": 40}, clock=clock)
    p.start()
    p.update("host-t1", 0, 0, 0, "running", "S-1")
    p.update("host-t2", 0, 0, 0, "waiting")
    clock.t += 20  # host-t1: 40 samples in 20 s
    p.update("host-t1", 40, 40, 0, "done")
    p.update("host-t2", 0, 0, 0, "running", "S-1")
    clock.t += 10  # host-t2: 40 samples in 10 s, twice as fast, while host-t1's bar is still updated
    p.update("host-t1", 40, 40, 0, "done")
    p.update("host-t2", 40, 40, 0, "done")
    p._bars.refresh()
    p.close()
    out = buf.getvalue()
    assert "2.00 samples/s" in out and "4.00 samples/s" in out and "1.33 samples/s" not in out, out


def test_a_resumed_device_counts_its_earlier_runs_but_rates_only_this_sessions():
    """--resume: the runner first replays the rows an earlier session finished (before it is running);
    they count in done/total, never in the rate (issue 41: "605/40 ... 7533 samples/s")."""
    buf, clock = io.StringIO(), Clock()
    p = FarmProgress(_console(buf), {"pi-5": 1200}, interval_s=10, clock=clock, units={"pi-5": "runs"})
    p.start()
    p.update("pi-5", 440, 440, 0, "loading model", earlier=880)  # the replay, half-way
    clock.t += 1
    p.update("pi-5", 880, 880, 0, "running", "S-1@r23", earlier=880)
    clock.t += 10
    p.update("pi-5", 900, 900, 0, "running", "S-3@r23", earlier=880)
    assert buf.getvalue().splitlines() == ["pi-5     900/1200 runs (ok 900, failed 0) 2.00 runs/s, ETA 2 min 30 s, "
                                           "running S-3@r23"]  # fmt: skip
