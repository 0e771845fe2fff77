"""One run per device: a lock folder in the device's workdir, taken and checked ON the device.

Two runs on one phone at once polluted each other's latency figures, or killed one of them in the
middle of a push (issue 24). `held(device, run_id)` takes `WORKDIR/run.lock/` with an atomic `mkdir`
through the Device protocol's `run()` (so phones, boards and this host alike, whichever host the runs
start from), writes the holder there (`run=… pid=… host=… boot=… start=…`) and refreshes its mtime
every HEARTBEAT_S while the run holds it.

A second run finds the folder and asks whether its holder is alive:
- holder on this host (same host name and boot id): alive while a process with its pid AND its start
  time exists (a recycled pid does not count);
- holder on another host: alive while its heartbeat, as the device's own clock sees it, is younger
  than STALE_S.
A live holder: the run is refused at once (`DeviceBusy`, the device's outcome) with the holder's run
id, pid and host and the fix (a cluster run's holder also names its controller's host and pid, which is
what stops that run). A dead one: the lock is taken over and a note says so.

A lock that cannot be taken is never a run without one (issue 34): a `run.lock` that is not a folder,
a workdir where it cannot be made, or a dead holder's lock that cannot be removed each refuse the
device (`LockUnavailable`) naming the path and the fix.
"""

from __future__ import annotations

import os
import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..errors import DeviceError, DeviceLost, EdgefarmError
from .base import Device

LOCK_DIR = "run.lock"
HEARTBEAT_S = 30.0  # the holder touches its file this often
STALE_S = 180.0  # a holder on another host whose heartbeat is older than this is gone
CALL_TIMEOUT_S = 30.0
WRITING_WAIT_S = 0.5  # a lock folder without its holder line yet is looked at again after this

# $1 lock folder, $2 this run's holder line.
# TAKEN | HELD <holder line> then AGE <seconds> | NOTDIR (something else has the name) | NOWRITE
_TAKE = r"""L=$1; ME=$2
mkdir -p "${L%/*}" 2>/dev/null
if mkdir "$L" 2>/dev/null; then
  if printf '%s\n' "$ME" > "$L/holder"; then echo TAKEN; else rmdir "$L"; echo NOWRITE; fi
  exit 0
fi
if [ -e "$L" ] || [ -L "$L" ]; then [ -d "$L" ] || { echo NOTDIR; exit 0; }; else echo NOWRITE; exit 0; fi
echo "HELD $(cat "$L/holder" 2>/dev/null | head -n 1)"
now=$(date +%s); t=$(stat -c %Y "$L/holder" 2>/dev/null || stat -c %Y "$L" 2>/dev/null || echo "$now")
echo "AGE $((now - t))"
"""
# $1 lock folder, $2 this run's holder line, $3 the dead holder's line: TAKEN | CHANGED | STUCK <why>
_TAKE_OVER = r"""L=$1; ME=$2; OLD=$3
[ "$(cat "$L/holder" 2>/dev/null | head -n 1)" = "$OLD" ] || { echo CHANGED; exit 0; }
rm -rf "$L.stale.$$"
if ! why=$(mv "$L" "$L.stale.$$" 2>&1); then echo "STUCK $why" | head -n 1; exit 0; fi
rm -rf "$L.stale.$$"
if mkdir "$L" 2>/dev/null && printf '%s\n' "$ME" > "$L/holder"; then echo TAKEN; else echo CHANGED; fi
"""
# $1 lock folder, $2 this run's holder line, $3 touch | release: only the holder's own lock
_MINE = r"""L=$1; ME=$2
[ "$(cat "$L/holder" 2>/dev/null | head -n 1)" = "$ME" ] || exit 0
if [ "$3" = release ]; then rm -rf "$L"; else touch "$L/holder"; fi
"""


class DeviceBusy(DeviceError):
    """Another live run holds the device."""


class LockUnavailable(DeviceBusy):
    """The device's lock cannot be taken (not a folder, no room to make it, a stale one stuck): the
    device is refused, never run unlocked."""


@dataclass(frozen=True)
class Holder:
    run: str
    pid: int
    host: str
    boot: str
    start: str  # the pid's start time in clock ticks since boot (/proc/PID/stat field 22)
    controller: str = ""  # a cluster run's: "PID@HOST" of the controller the holding agent works for

    def line(self) -> str:
        line = f"run={self.run} pid={self.pid} host={self.host} boot={self.boot} start={self.start}"
        return line + (f" controller={self.controller}" if self.controller else "")

    def stop_hint(self) -> str:
        """How to stop the run that holds the lock: its controller for a cluster run's agent."""
        pid, _, host = self.controller.partition("@")
        if pid.isdigit() and host:
            return (f"stop run {self.run} on its controller (Ctrl-C there, or `kill -INT {pid}` on {host}); "
                    f"the lock is held for it by the agent pid {self.pid} on farm host {self.host}")  # fmt: skip
        return f"stop it (Ctrl-C, or `kill -INT {self.pid}` on {self.host})"


def parse_holder(line: str) -> Holder | None:
    """A holder line back into its fields (pure); None when it is not one."""
    fields = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
    pid = fields.get("pid", "")
    if not pid.isascii() or not pid.isdigit():
        return None
    return Holder(fields.get("run", ""), int(pid), fields.get("host", ""), fields.get("boot", ""),
                  fields.get("start", ""), fields.get("controller", ""))  # fmt: skip


def host_name() -> str:
    """This host's name as a holder line carries it (no spaces, no `=`)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", socket.gethostname())[:64] or "host"


def controller_id() -> str:
    """`PID@HOST` of this process: what a cluster run's agents write into the locks they take for it."""
    return f"{os.getpid()}@{host_name()}"


def this_process(run_id: str, controller: str = "") -> Holder:
    safe = re.sub(r"[^A-Za-z0-9._@-]", "_", controller)[:80]
    return Holder(run_id, os.getpid(), host_name(), _boot_id(), _start_ticks(os.getpid()) or "", safe)


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def _start_ticks(pid: int) -> str | None:
    """Field 22 of /proc/PID/stat (after the parenthesised command name), or None: no such process, or
    a zombie (a SIGKILLed edgefarm whose parent has not reaped it yet holds nothing: `kill -9` then
    `--resume` at once was refused as busy)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    rest = text.rsplit(")", 1)[-1].split()
    return rest[19] if len(rest) > 19 and rest[0] != "Z" else None


def holder_alive(holder: Holder, age_s: float, me: Holder) -> bool:
    """Is the run that wrote `holder` still there? (pure but for /proc on this host)"""
    if holder.host == me.host and holder.boot and holder.boot == me.boot:
        return _start_ticks(holder.pid) == holder.start and holder.start != ""
    return age_s < STALE_S


def _script(device: Device, script: str, *args: str) -> list[str]:
    lines: list[str] = []
    ex = device.run(["sh", "-c", script, "sh", *args], timeout_s=CALL_TIMEOUT_S, on_line=lines.append)
    if ex.code != 0:
        raise DeviceError(f"the lock script ended with {ex.code or ex.signal}: {ex.output_tail[-200:]}",
                          where=device.name, fix="check the device's workdir")  # fmt: skip
    return lines


def _unavailable(device: Device, lock: str, why: str, fix: str) -> LockUnavailable:
    return LockUnavailable(f"{device.name}'s one-run lock {lock} cannot be taken: {why}; the device is not "
                           "run without it (a second run could share it unseen)", where=device.name, fix=fix)  # fmt: skip


def acquire(device: Device, me: Holder) -> tuple[bool, str]:
    """(True, note). Raises DeviceBusy when a live run holds the device, LockUnavailable when the lock
    cannot be taken (never a run without it)."""
    lock = str(PurePosixPath(device.workdir) / LOCK_DIR)
    for attempt in range(3):
        lines = _script(device, _TAKE, lock, me.line())
        if "TAKEN" in lines:
            return True, ""
        if "NOTDIR" in lines:
            raise _unavailable(device, lock, "something that is not a folder has its name",
                               f"remove it (`rm {lock}` on {device.name}: edgefarm makes the folder itself), then rerun")  # fmt: skip
        if "NOWRITE" in lines:
            raise _unavailable(device, lock, f"it cannot be made in {device.workdir} (not writable, or full)",
                               f"make {device.workdir} writable with room (or set another `workdir:` in devices.yaml), then rerun")  # fmt: skip
        held = next((ln[5:] for ln in lines if ln.startswith("HELD ")), None)
        if held is None:
            raise _unavailable(device, lock, f"the lock script answered {' '.join(lines)[:200]!r}",
                               "check the device's workdir and shell")  # fmt: skip
        if held == me.line():  # this process took it before (a phone lost, then back in the same run)
            return True, ""
        age = next((ln[4:] for ln in lines if ln.startswith("AGE ")), "0")
        age_s = float(age) if age.lstrip("-").isdigit() else 0.0
        holder = parse_holder(held)
        if holder is None and age_s < STALE_S:  # being written this instant, or not ours to judge yet
            if held == "" and attempt < 2:  # made, its holder not yet written: look again in a moment
                time.sleep(WRITING_WAIT_S)  # (devices sharing a workdir in one run take it at once)
                continue
            raise DeviceBusy(f"another run is taking {device.name} right now ({lock} has no holder yet)",
                             where=device.name, fix=f"wait for that run; if none is running, remove {lock}")  # fmt: skip
        if holder is not None and holder_alive(holder, age_s, me):
            raise DeviceBusy(
                f"{device.name} is in use by run {holder.run} (pid {holder.pid} on {holder.host}); "
                "two runs on one device would skew each other's figures",
                where=device.name,
                fix=f"wait for run {holder.run} to finish, or {holder.stop_hint()}, then rerun; a lock whose "
                "run is gone is taken over by itself",
            )
        over = _script(device, _TAKE_OVER, lock, me.line(), held)
        who = f"run {holder.run} (pid {holder.pid} on {holder.host})" if holder else "an unknown run"
        if "TAKEN" in over:
            return True, f"warning: took over {device.name}'s lock from {who}, which is no longer running"
        stuck = next((ln[6:] for ln in over if ln.startswith("STUCK")), None)
        if stuck is not None:
            raise _unavailable(device, lock, f"it was left by {who}, which is no longer running, and cannot be "
                               f"removed ({stuck.strip()[:200] or 'permission denied'})",
                               f"remove it by hand (`rm -rf {lock}` on {device.name}, as the user that owns it), then rerun")  # fmt: skip
    raise DeviceBusy(f"{device.name}'s lock {lock} keeps changing hands", where=device.name,
                     fix=f"another run is starting on this device: let it run, then rerun; if none is, remove {lock}")  # fmt: skip


@contextmanager
def held(
    device: Device, run_id: str, *, heartbeat_s: float = HEARTBEAT_S, controller: str = ""
) -> Iterator[str]:
    """Hold `device` for run `run_id` for the block; yields a note ("" or the takeover). A device that
    cannot be reached here (DeviceLost) is not locked: nothing can run on it, and the session reports
    why. `controller`: a cluster run's controller (`controller_id()`), written into the holder line."""
    if getattr(device, "workdir", None) is None:
        yield ""
        return
    me = this_process(run_id, controller)
    try:
        _, note = acquire(device, me)
    except DeviceLost:
        yield ""
        return
    lock = str(PurePosixPath(device.workdir) / LOCK_DIR)
    done = threading.Event()

    def beat() -> None:
        while not done.wait(heartbeat_s):
            try:
                _script(device, _MINE, lock, me.line(), "touch")
            except EdgefarmError:
                pass  # a lost device: its session says so; a lock left behind goes stale

    thread = threading.Thread(target=beat, name=f"lock-{device.name}", daemon=True)
    thread.start()
    try:
        yield note
    finally:
        done.set()
        try:
            _script(device, _MINE, lock, me.line(), "release")
        except EdgefarmError:
            pass  # the device went away; the lock goes stale (or is taken over on this host at once)
