"""This host's load while a run ran: the load average and the CPU that OTHER processes used, the run's own
process tree (edgefarm and its runners) left out (issue 41).

A figure measured while another program loads the host moves by it (three identical runs gave host-t2
0.98x, 1.88x, 1.12x), and the samples' intervals cannot show it. So every run samples /proc: the
1-minute load average (/proc/loadavg), the busy CPU time of the whole host (/proc/stat's `cpu` line) and
that of its own process tree (utime+stime+cutime+cstime of edgefarm and every live descendant,
/proc/<pid>/stat: a child reaped in between has its time in its parent's c-times, so the sum runs on).
Other processes' CPU over an interval is the host's busy time less the tree's, in cores. Each tick also
notes which `kind: local` device's runner was alive (its command line names its job folder), so a
device's conditions are those of its own running time.

The parsers and the summaries are pure; `HostLoadSampler` is the one effectful part (a thread with
start/stop; stop never raises)."""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

INTERVAL_S = 0.5  # between two ticks once a run is under way (what a tick costs: docs/conditions.md)
FIRST_INTERVAL_S = 0.1  # the first ticks: a device that runs ~0.5 s (the tiny model) is seen


def parse_loadavg(text: str) -> float | None:
    """/proc/loadavg -> the 1-minute load average (None when unreadable)."""
    try:
        return float(text.split()[0])
    except (IndexError, ValueError):
        return None


def parse_cpu_ticks(line: str) -> tuple[int, int] | None:
    """One `cpu` line of /proc/stat -> (busy, all) clock ticks of every CPU together: busy is user, nice,
    system, irq, softirq and steal (every state but idle and iowait; guest time is inside user)."""
    words = line.split()
    if not words or words[0] != "cpu":
        return None
    try:
        ticks = [int(w) for w in words[1:9]]
    except ValueError:
        return None
    if len(ticks) < 4:
        return None
    ticks += [0] * (8 - len(ticks))
    user, nice, system, _idle, _iowait, irq, softirq, steal = ticks
    return user + nice + system + irq + softirq + steal, sum(ticks)


def parse_cpu_busy(text: str) -> int | None:
    """/proc/stat -> the whole host's busy CPU time in clock ticks (parse_cpu_ticks)."""
    found = next((t for line in text.splitlines() if (t := parse_cpu_ticks(line)) is not None), None)
    return None if found is None else found[0]


# A device's background before a run, in one shell command every device kind has (toybox on phones): the
# CPU lines 0.2 s apart and the load average. Nothing of edgefarm runs on the device then.
START_PROBE = "head -n 1 /proc/stat; sleep 0.2; head -n 1 /proc/stat; cat /proc/loadavg"


def parse_start_probe(text: str, cores: int | None) -> dict[str, float]:
    """START_PROBE's reply -> {"background_cores": the CPU busy between its two reads, in cores (needs
    `cores`), "load1": the 1-minute load average}; what cannot be read is left out."""
    lines = text.splitlines()
    ticks = [t for line in lines if (t := parse_cpu_ticks(line)) is not None]
    out: dict[str, float] = {}
    if len(ticks) == 2 and cores and ticks[1][1] > ticks[0][1]:
        busy = (ticks[1][0] - ticks[0][0]) / (ticks[1][1] - ticks[0][1])
        out["background_cores"] = round(max(0.0, busy) * cores, 2)
    load = next(
        (v for line in lines if not line.startswith("cpu") and (v := parse_loadavg(line)) is not None), None
    )
    if load is not None:
        out["load1"] = load
    return out


def parse_pid_stat(text: str) -> tuple[int, int] | None:
    """/proc/<pid>/stat -> (parent pid, utime+stime+cutime+cstime in clock ticks). The command name (2nd
    field) may hold spaces and parentheses: the fields are counted after its last ')'."""
    words = text[text.rfind(")") + 1 :].split()
    try:
        return int(words[1]), sum(int(w) for w in words[11:15])
    except (IndexError, ValueError):
        return None


@dataclass(frozen=True)
class Tick:
    """One look at the host: when (seconds, monotonic), its load average, its busy CPU ticks, the run's
    own tree's CPU ticks and the devices whose runner was alive."""

    t_s: float
    load1: float | None
    busy: int | None
    tree: int
    running: frozenset[str] = frozenset()


def _r(x: float | None, digits: int = 2) -> float | None:
    return None if x is None else round(x, digits)


@dataclass(frozen=True)
class HostLoad:
    """This host over a window: its load average and the CPU other processes and the run used, in cores
    (1.0 = one core busy the whole window)."""

    seconds: float
    ticks: int
    cpus: int | None
    load1_mean: float | None = None
    load1_max: float | None = None
    other_cores_mean: float | None = None  # every process but the run's tree
    other_cores_max: float | None = None  # the busiest interval
    own_cores_mean: float | None = None  # edgefarm and its runners

    def to_dict(self) -> dict[str, Any]:
        return {"seconds": self.seconds, "ticks": self.ticks, "cpus": self.cpus, "load1_mean": self.load1_mean,
                "load1_max": self.load1_max, "other_cores_mean": self.other_cores_mean,
                "other_cores_max": self.other_cores_max, "own_cores_mean": self.own_cores_mean}  # fmt: skip

    @classmethod
    def from_dict(cls, data: Any) -> HostLoad | None:
        if not isinstance(data, Mapping):
            return None

        def num(key: str) -> float | None:
            v = data.get(key)
            return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

        cpus = data.get("cpus")
        return cls(num("seconds") or 0.0, int(num("ticks") or 0), cpus if isinstance(cpus, int) else None,
                   num("load1_mean"), num("load1_max"), num("other_cores_mean"), num("other_cores_max"),
                   num("own_cores_mean"))  # fmt: skip

    def text(self) -> str:
        """`other processes 1.02 cores (busiest 1 s: 1.10), load average 1.9 (max 2.3), edgefarm 0.98 cores,
        over 12 s`."""
        parts = []
        if self.other_cores_mean is not None:
            parts.append(f"other processes {self.other_cores_mean:.2f} cores (busiest interval "
                         f"{self.other_cores_max:.2f})")  # fmt: skip
        if self.load1_mean is not None:
            parts.append(f"load average {self.load1_mean:.1f} (max {self.load1_max:.1f})")
        if self.own_cores_mean is not None:
            parts.append(f"edgefarm {self.own_cores_mean:.2f} cores")
        cpus = f" of {self.cpus} CPUs" if self.cpus else ""
        over = f"{self.seconds:.1f}" if self.seconds < 10 else f"{self.seconds:.0f}"
        return ", ".join(parts) + f"{cpus}, over {over} s" if parts else "not measured"


def summary(ticks: Sequence[Tick], cpus: int | None, hz: float, device: str | None = None) -> HostLoad | None:
    """The load over the ticks (`device`: over the intervals its runner was alive at either end); None
    with fewer than two ticks in the window."""
    spans = [
        (a, b)
        for a, b in itertools.pairwise(ticks)
        if b.t_s > a.t_s and (device is None or device in a.running or device in b.running)
    ]
    if not spans:
        return None
    seconds = sum(b.t_s - a.t_s for a, b in spans)
    other, own = [], 0.0
    for a, b in spans:
        dt = (b.t_s - a.t_s) * hz
        tree = max(0, b.tree - a.tree)
        own += tree
        if a.busy is not None and b.busy is not None:
            other.append((max(0, b.busy - a.busy - tree) / dt, b.t_s - a.t_s))
    loads = [t.load1 for a, b in spans for t in (a, b) if t.load1 is not None]
    other_mean = sum(c * w for c, w in other) / sum(w for _, w in other) if other else None
    return HostLoad(
        seconds=round(seconds, 1),
        ticks=len(spans) + 1,
        cpus=cpus,
        load1_mean=_r(sum(loads) / len(loads)) if loads else None,
        load1_max=_r(max(loads)) if loads else None,
        other_cores_mean=_r(other_mean),
        other_cores_max=_r(max(c for c, _ in other)) if other else None,
        own_cores_mean=_r(own / hz / seconds),
    )


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


class HostLoadSampler:
    """Ticks of this host from `start()` to `stop()`, in a thread: every 0.1 s at first, every `interval_s`
    after the first seconds. `runners`: device
    name -> a text its runner's command line holds (its job folder), for the devices that run on this
    host. Never raises out of a tick: an unreadable /proc gives a tick without that figure."""

    def __init__(
        self,
        runners: Mapping[str, str] | None = None,
        *,
        interval_s: float = INTERVAL_S,
        proc: Path = Path("/proc"),
        clock: Callable[[], float] = time.monotonic,
        pid: int | None = None,
    ) -> None:
        self.runners = dict(runners or {})
        self.interval_s = interval_s
        self.proc = proc
        self.clock = clock
        self.pid = os.getpid() if pid is None else pid
        self.ticks: list[Tick] = []
        self.hz = float(os.sysconf("SC_CLK_TCK")) if hasattr(os, "sysconf") else 100.0
        self.cpus = os.cpu_count()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._cmdlines: dict[int, str] = {}

    def start(self) -> HostLoadSampler:
        self._tick()
        self._thread = threading.Thread(target=self._loop, name="host-load", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
            self._tick()

    def _loop(self) -> None:
        start = self.clock()
        while not self._stop.wait(self.wait_s(self.clock() - start)):
            self._tick()

    def wait_s(self, elapsed_s: float) -> float:
        """The wait before the next tick: from FIRST_INTERVAL_S, growing to `interval_s` over the first 8 s."""
        return min(self.interval_s, max(FIRST_INTERVAL_S, FIRST_INTERVAL_S + elapsed_s / 20))

    def _tick(self) -> None:
        with contextlib.suppress(Exception):  # a sampler never takes the run down: the tick is missing
            self.ticks.append(self.look())

    def look(self) -> Tick:
        """One tick: the load, the host's busy time, the tree's time and the runners alive."""
        t = self.clock()
        stats: dict[int, tuple[int, int]] = {}
        for entry in os.scandir(self.proc):
            if entry.name.isdigit():
                parsed = parse_pid_stat(_read(Path(entry.path) / "stat"))
                if parsed is not None:
                    stats[int(entry.name)] = parsed
        children: dict[int, list[int]] = {}
        for pid, (ppid, _) in stats.items():
            children.setdefault(ppid, []).append(pid)
        tree, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            tree.append(pid)
            todo += children.get(pid, [])
        running = set()
        if self.runners:
            for pid in tree[
                1:
            ]:  # a runner's command line, kept once it names one (read before its exec: not)
                line = self._cmdlines.get(pid) or _read(self.proc / str(pid) / "cmdline").replace("\0", " ")
                found = {name for name, mark in self.runners.items() if mark in line}
                if found:
                    self._cmdlines[pid] = line
                running |= found
        return Tick(
            t_s=t,
            load1=parse_loadavg(_read(self.proc / "loadavg")),
            busy=parse_cpu_busy(_read(self.proc / "stat")),
            tree=sum(stats[p][1] for p in tree if p in stats),
            running=frozenset(running),
        )

    def load(self, device: str | None = None) -> HostLoad | None:
        """The summary of the ticks so far (of one device's running time with `device`)."""
        return summary(list(self.ticks), self.cpus, self.hz, device)
