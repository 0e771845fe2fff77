"""Android phones over ADB (adbutils against a local or remote adb server).

Every call has our own deadline: adbutils opens transports with a 600 s default and a frozen
phone is otherwise never noticed. adbutils' own exceptions never leave this module: they become
DeviceError / DeviceLost naming the phone. Shell always uses shell v2 (real exit codes; the v1
fallback appends `; echo X4EXIT:$?` and breaks on `exit N`).

Size: one transport over 400 lines on purpose: shell v2 framing, sync push/pull with the hash
skip, info and the adb-server probe share one deadline and one error mapping; splitting them would
spread that mapping over several modules.
"""

from __future__ import annotations

import os
import re
import shlex
import socket
import stat
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, TypeVar

from android_runner.status import signal_from_shell_status

from ..errors import DeviceError, DeviceLost
from ..telemetry import android as tel
from ..telemetry.host_load import START_PROBE, parse_start_probe
from .files import cached_sha256, parse_sha256sum, push_pairs
from .types import DeviceInfo, Exit, LineSink, ProgressSink, PushStats

if TYPE_CHECKING:
    import adbutils
# adbutils (with requests: ~0.2 s of CPU to import) is imported where a phone is talked to, never by a
# run that finds no adb server (devices/adb_discovery.py asks the server's port first).

DEFAULT_WORKDIR = PurePosixPath("/data/local/tmp/edgefarm")
CALL_TIMEOUT_S = 30.0  # one short device call (getprop, stat, sha256sum of a few files)
INFO_FRESH_S = 15.0  # info() asked again within this long is answered from the last reply
SYNC_CHUNK = 64 * 1024
FIX_UNAUTHORIZED = "accept the RSA prompt on the phone (tick 'Always allow'), then rerun"
FIX_OFFLINE = "replug the phone or run `adb reconnect` (remote host: `adb -P PORT reconnect`)"
FIX_LOST = "check the cable/Wi-Fi and `adb devices`; rerun with --resume to continue where it stopped"
T = TypeVar("T")

_LOST_TEXT = re.compile(r"offline|not found|no devices|closed|unauthorized|Invalid sync cmd", re.IGNORECASE)


def server_up(host: str, port: int, timeout_s: float = 2.0) -> bool:
    """Probe with a raw socket: adbutils would otherwise spawn `adb start-server` on a miss."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True
    except OSError:
        return False


def fix_server(host: str, port: int, *, resume: bool = True) -> str:
    """How to bring an adb server back, with its own port (pasted as one command)."""
    if host in ("127.0.0.1", "localhost", "::1"):
        start = "adb start-server" if port == 5037 else f"adb -P {port} start-server"
        how = f"restart it: `{start}` (a farm host serving others: `adb -a -P {port} nodaemon server`)"
    else:
        how = f"restart it on the farm host {shlex.quote(host)}: `adb -a -P {port} nodaemon server`"
    return f"{how}, then rerun with --resume to continue where it stopped" if resume else how


def _bounded(fn: Callable[[], T], timeout_s: float, what: str, where: str) -> T:
    """Run fn with a deadline; adbutils exceptions become ours, naming the device."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised below in the caller's thread
            box["error"] = e

    t = threading.Thread(target=target, daemon=True, name=f"adb:{what}")
    t.start()
    t.join(timeout_s)
    if t.is_alive():
        raise DeviceLost(
            f"{what} did not finish within {timeout_s:g} s (phone frozen or gone)", where=where, fix=FIX_LOST
        )
    err = box.get("error")
    if err is None:
        return box["value"]
    if isinstance(err, (DeviceError,)):
        raise err
    import adbutils

    if isinstance(err, (adbutils.AdbTimeout, BrokenPipeError, EOFError, ConnectionError, socket.timeout)):
        raise DeviceLost(f"{what} failed: {type(err).__name__}: {err}", where=where, fix=FIX_LOST) from err
    if isinstance(err, adbutils.AdbError) and _LOST_TEXT.search(str(err)):
        raise DeviceLost(f"{what} failed: {err}", where=where, fix=FIX_LOST) from err
    if isinstance(err, (adbutils.AdbError, OSError)):
        raise DeviceError(
            f"{what} failed: {type(err).__name__}: {err}",
            where=where,
            fix="check `adb devices`; see the message above",
        ) from err
    raise err


PIPELINE = 32  # files sent before their replies are read (adb's own push batches small files too)


def _send_parts(sock, parts: list) -> None:
    """sendall for a list of buffers (scatter-gather: nothing is copied into one big buffer)."""
    views = [memoryview(p) for p in parts]
    while views:
        n = sock.sendmsg(views)
        while n and views:
            if n >= len(views[0]):
                n -= len(views[0])
                views.pop(0)
            else:
                views[0], n = views[0][n:], 0


def _read_exact(c, n: int, dst: PurePosixPath, serial: str) -> bytes:
    """n bytes of a sync reply; a stream that ends first is a DeviceError, never a struct.error."""
    import adbutils

    try:
        data = c.read(n)
    except (OSError, adbutils.AdbError) as e:
        data, why = b"", f" ({e})"
    else:
        why = ""
    if len(data) != n:
        raise DeviceError(
            f"the adb sync connection closed in the middle of the reply for {dst}{why}: the phone went "
            "away, the adb server was restarted, or another process is using the phone",
            where=str(serial),
            fix="check `adb devices` and that no other edgefarm run uses this phone; then rerun with --resume",
        )
    return data


def read_sync_replies(c, pending: list[PurePosixPath], serial: str) -> None:
    """The sync replies of the files sent so far, in order: OKAY, or FAIL with the phone's reason."""
    while pending:
        dst = pending.pop(0)
        status = _read_exact(c, 4, dst, serial)
        length = struct.unpack("<I", _read_exact(c, 4, dst, serial))[0]
        if status != b"OKAY":
            msg = (
                _read_exact(c, length, dst, serial).decode(errors="replace")
                if status == b"FAIL" and length
                else repr(status)
            )
            raise DeviceError(
                f"push of {dst} refused: {msg}",
                where=str(serial),
                fix=f"check free space on the phone and that `workdir:` of this phone in devices.yaml "
                f"({dst.parent}) is a folder the shell user may write (default: /data/local/tmp/edgefarm)",
            )


class AdbDevice:
    """One phone on one adb server."""

    kind = "adb"  # its row of devices/kinds.py: its runner and what it is

    def __init__(
        self,
        name: str,
        serial: str,
        *,
        server: tuple[str, int] = ("127.0.0.1", 5037),
        workdir: PurePosixPath = DEFAULT_WORKDIR,
        backend: str = "cpu",
        threads: int | None = None,
        phone_runner: str = "",
        runner_binary: Path | None = None,
        native_runner: Path | None = None,
        runtime_lib: Path | None = None,
        libs: Sequence[Path] = (),
        call_timeout_s: float = CALL_TIMEOUT_S,
        on_progress: ProgressSink | None = None,
    ) -> None:
        self.name = name
        self.serial = serial
        self.server = server
        self.workdir = PurePosixPath(workdir)
        self.backend = backend
        self.threads = threads
        self.phone_runner = phone_runner
        self.runner_binary = runner_binary
        self.native_runner = native_runner
        self.runtime_lib = runtime_lib
        self.libs = tuple(libs)
        self.call_timeout_s = call_timeout_s
        self.on_progress = on_progress
        self._info: tuple[float, DeviceInfo] | None = None  # (monotonic time, last info() reply)
        self.props: dict[str, str] = {}  # the phone's properties (getprop) as the last info() read them

    @classmethod
    def from_entry(cls, entry: Mapping[str, Any], server: tuple[str, int] | None = None) -> AdbDevice:
        """From a devices.yaml entry (`serial`, optional `server: host:port`, pins)."""
        if server is None:
            host, _, port = str(entry.get("server", "127.0.0.1:5037")).rpartition(":")
            server = (host or "127.0.0.1", int(port or 5037))

        def path(key: str) -> Path | None:
            return Path(entry[key]).expanduser() if entry.get(key) else None

        return cls(
            name=entry["name"],
            serial=entry["serial"],
            server=server,
            workdir=PurePosixPath(entry.get("workdir", str(DEFAULT_WORKDIR))),
            backend=entry.get("backend", "cpu"),
            threads=entry.get("threads"),
            phone_runner=entry.get("runner", ""),
            runner_binary=path("runner_path"),
            native_runner=path("native_runner"),
            runtime_lib=path("runtime_lib"),
            libs=tuple(Path(p).expanduser() for p in entry.get("libs") or ()),
        )

    @property
    def where(self) -> str:
        host, port = self.server
        return f"{self.name} (adb {self.serial} on {host}:{port})"

    def _client(self) -> adbutils.AdbClient:
        host, port = self.server
        if not server_up(host, port):
            raise DeviceLost(
                f"adb server {host}:{port} does not answer",
                where=self.where,
                fix=fix_server(host, port),
            )
        import adbutils

        return adbutils.AdbClient(host, port, socket_timeout=self.call_timeout_s)

    def _dev(self) -> adbutils.AdbDevice:
        return self._client().device(self.serial)

    def call(self, fn: Callable[[adbutils.AdbDevice], T], what: str, timeout_s: float | None = None) -> T:
        try:
            return _bounded(lambda: fn(self._dev()), timeout_s or self.call_timeout_s, what, self.where)
        except DeviceLost as e:
            raise self.why_lost(e, what) from e

    def why_lost(self, lost: DeviceLost, what: str) -> DeviceLost:
        """`lost` as it is, or, when the adb server itself no longer answers, a DeviceLost that says
        so (`adb kill-server` mid-run looked like a pulled cable) with the command that restarts it."""
        host, port = self.server
        if server_up(host, port):
            return lost
        return DeviceLost(
            f"the adb server {host}:{port} is gone (stopped by `adb kill-server`, or it crashed) during {what}",
            where=self.where,
            fix=fix_server(host, port),
        )

    def shell(self, command: str, timeout_s: float | None = None) -> tuple[int, str, str]:
        """A short shell v2 command (a string WE built, never dataset text) -> (rc, stdout, stderr)."""
        t = timeout_s or self.call_timeout_s
        r = self.call(lambda d: d.shell2(command, timeout=t, v2=True), f"shell `{command[:60]}`", t + 5)
        return r.returncode, r.stdout, r.stderr

    # ---------------------------------------------------------------- info

    def info(self) -> DeviceInfo:
        """What the phone is. Selection, session and preflight each ask within a second or two: a
        reply younger than INFO_FRESH_S is reused (a farm of 16 phones is 32 fewer device calls)."""
        if self._info is not None and time.monotonic() - self._info[0] < INFO_FRESH_S:
            return self._info[1]
        info = self._read_info()
        self._info = (time.monotonic(), info)
        return info

    def named(self, name: str) -> AdbDevice:
        """This phone as a device called `name`, keeping what was read from it: discovery reads an
        unnamed phone before it can name it (its name comes from that read), and the run's own info()
        within INFO_FRESH_S takes the same reply instead of asking the phone again."""
        dev = AdbDevice(name, self.serial, server=self.server, workdir=self.workdir)
        dev.props = self.props
        if self._info is not None:
            read_at, info = self._info
            dev._info = (read_at, replace(info, name=name))
        return dev

    def _read_info(self) -> DeviceInfo:
        marker = "@@EDGEFARM@@"
        parts = [
            "getprop",
            "cat /proc/meminfo",
            f"df -k {shlex.quote(str(self.workdir.parent))}",
            "dumpsys battery",
            "dumpsys thermalservice",
            "nproc",
            START_PROBE,  # the phone's background CPU and load before the run (0.2 s)
        ]
        cmd = "; ".join(f"echo {marker}; {p} 2>/dev/null" for p in parts)
        _, out, _ = self.shell(cmd)
        sections = out.split(marker + "\n")[1:]
        sections += [""] * (len(parts) - len(sections))
        props = self.props = tel.parse_getprop(sections[0])
        battery = tel.parse_battery(sections[3])
        thermal = tel.parse_thermal(sections[4])
        release, sdk = props.get("ro.build.version.release", ""), props.get("ro.build.version.sdk", "")
        cores = sections[5].strip()
        abis = props.get("ro.product.cpu.abilist") or props.get("ro.product.cpu.abi", "")
        return DeviceInfo(
            name=self.name,
            kind="adb",
            serial=self.serial,
            model=props.get("ro.product.model", ""),
            manufacturer=props.get("ro.product.manufacturer", ""),
            soc=tel.soc_from_props(props),
            abi=props.get("ro.product.cpu.abi", ""),
            abis=tuple(filter(None, abis.split(","))),  # every ABI it runs binaries of
            os=f"Android {release} (SDK {sdk})" if release else "",
            build=props.get("ro.build.fingerprint") or props.get("ro.build.display.id", ""),
            cores=int(cores) if cores.isdigit() else None,
            ram_mb=tel.ram_mb(tel.parse_meminfo(sections[1])),
            free_storage_mb=tel.parse_df_free_mb(sections[2]),
            extra={
                "server": f"{self.server[0]}:{self.server[1]}",
                "battery_pct": battery.level_pct,
                "battery_temp_c": battery.temperature_c,
                "charging": battery.charging,
                "external_power": ", ".join(battery.powered) or battery.plugged,  # "" on battery
                "thermal_status": thermal.status_name or None,
                "max_temp_c": thermal.max_temp_c,
                "backend": self.backend,
                "threads": self.threads,
                **parse_start_probe(sections[6], int(cores) if cores.isdigit() else None),
            },
        )

    # ---------------------------------------------------------------- files

    def remote_sha256(self, paths: Sequence[PurePosixPath]) -> dict[str, str]:
        """sha256 of each device file that exists (missing ones are simply absent)."""
        found: dict[str, str] = {}
        for i in range(0, len(paths), 64):
            batch = paths[i : i + 64]
            _, out, _ = self.shell(
                "sha256sum -- " + " ".join(shlex.quote(str(p)) for p in batch) + " 2>/dev/null",
                timeout_s=max(self.call_timeout_s, 120.0),
            )
            found.update(parse_sha256sum(out))
        return found

    def push(self, local: Path, remote: PurePosixPath, on_progress: ProgressSink | None = None) -> PushStats:
        """Push a file or a tree; every file whose sha256 already matches on the phone is skipped."""
        return self.push_many([(local, remote)], on_progress)[0]

    def push_many(
        self,
        items: Sequence[tuple[Path, PurePosixPath]],
        on_progress: ProgressSink | None = None,
        have: Mapping[str, str] | None = None,
    ) -> list[PushStats]:
        """Several files or trees with ONE hash check and ONE sync connection, so a folder of small
        media files or a whole staging costs two round trips, not two per file; stats per item.
        `have`: the targets' sha256 on the phone when the caller checked them already."""
        groups = [push_pairs(local, remote, self.where) for local, remote in items]
        if have is None:
            have = self.remote_sha256([r for pairs in groups for _, r in pairs])
        sink = on_progress or self.on_progress
        todo: list[tuple[Path, PurePosixPath, int]] = []
        out = []
        for pairs in groups:
            stats = PushStats()
            for src, dst in pairs:
                size = src.stat().st_size
                if have.get(str(dst)) == cached_sha256(src):
                    stats += PushStats(files_skipped=1, bytes_skipped=size)
                    if sink:
                        sink(str(dst), size, size)
                    continue
                todo.append((src, dst, stat.S_IMODE(src.stat().st_mode) | 0o600))
                stats += PushStats(files=1, bytes_sent=size)
            out.append(stats)
        if todo:
            total = sum(src.stat().st_size for src, _, _ in todo)
            timeout = self.call_timeout_s + total / (2 * 2**20) + len(todo) * 0.5  # generous: 2 MB/s floor
            what = f"push {todo[0][1]}" + (f" and {len(todo) - 1} more file(s)" if len(todo) > 1 else "")
            self.call(lambda d: self._send(d, todo, sink), what, timeout)
        return out

    @staticmethod
    def _send(
        dev: adbutils.AdbDevice, files: Sequence[tuple[Path, PurePosixPath, int]], sink: ProgressSink | None
    ) -> None:
        """Sync SEND requests, one per file, on one connection: 64 KiB chunks and a progress callback
        (adbutils has none). Like `adb push` of a folder, the files' replies are read in batches (every
        PIPELINE files and at the end), so small files do not each wait for a round trip."""
        c = dev.open_transport()
        pending: list[PurePosixPath] = []
        try:
            c.send_command("sync:")
            c.check_okay()
            for src, dst, mode in files:
                if len(pending) >= PIPELINE:
                    read_sync_replies(c, pending, dev.serial)
                size = src.stat().st_size
                spec = f"{dst},{stat.S_IFREG | mode}".encode()
                c.conn.sendall(b"SEND" + struct.pack("<I", len(spec)) + spec)
                sent = 0
                with open(src, "rb") as f:
                    # DATA records of 64 KiB (the protocol's limit), handed to the socket 16 at a time
                    # without copying: the adb server then forwards full 1 MiB packets, as for `adb push`
                    while block := f.read(SYNC_CHUNK * 16):
                        view = memoryview(block)
                        parts: list[bytes | memoryview] = []
                        for i in range(0, len(block), SYNC_CHUNK):
                            chunk = view[i : i + SYNC_CHUNK]
                            parts += [b"DATA" + struct.pack("<I", len(chunk)), chunk]
                        _send_parts(c.conn, parts)
                        sent += len(block)
                        if sink:
                            sink(str(dst), sent, size)
                c.conn.sendall(b"DONE" + struct.pack("<I", int(time.time())))
                pending.append(dst)
            read_sync_replies(c, pending, dev.serial)
        except OSError:
            if pending:  # the phone refused a file and hung up: its reply says why
                read_sync_replies(c, pending, dev.serial)
            raise
        finally:
            c.close()

    def pull(self, remote: PurePosixPath, local: Path) -> int:
        """Copy one device file to the host (missing file -> DeviceError, never an empty folder)."""
        info = self.call(lambda d: d.sync.stat(str(remote)), f"stat {remote}")
        if info.mode == 0 or not stat.S_ISREG(info.mode):
            raise DeviceError(
                f"no file {remote} on the phone",
                where=self.where,
                fix="check the driver's log in the device folder",
            )
        Path(local).parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(local).with_name(Path(local).name + ".part")
        timeout = self.call_timeout_s + info.size / (2 * 2**20)
        size = self.call(lambda d: d.sync.pull_file(str(remote), tmp), f"pull {remote}", timeout)
        os.replace(tmp, local)
        return size

    # ---------------------------------------------------------------- run

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout_s: float,
        on_line: LineSink | None = None,
        stdin: bytes | None = None,
        cancel: threading.Event | None = None,
    ) -> Exit:
        """Run argv (quoted here, once) with shell v2; stdout lines stream to on_line. When cancel is
        set the stream is closed and Exit.cancelled returned (the runner then stops its process)."""
        import adbutils

        command = shlex.join(str(a) for a in argv)
        deadline = time.monotonic() + timeout_s
        conn = self.call(
            lambda d: d.open_transport(timeout=min(timeout_s, self.call_timeout_s)), "open shell"
        )
        err_tail: deque[str] = deque(maxlen=40)
        pending = b""
        try:
            try:
                conn.send_command(f"shell,v2,raw:{command}")
                conn.check_okay()
                if stdin is not None:
                    conn.conn.sendall(struct.pack("<BI", 0, len(stdin)) + stdin + struct.pack("<BI", 4, 0))
                buf = b""
                sock = conn.conn
                while True:
                    while len(buf) >= 5 and len(buf) >= 5 + struct.unpack("<I", buf[1:5])[0]:
                        pid, length = buf[0], struct.unpack("<I", buf[1:5])[0]
                        data, buf = buf[5 : 5 + length], buf[5 + length :]
                        if pid == 1:
                            pending += data
                            *lines, pending = pending.split(b"\n")
                            for line in lines:
                                if on_line:
                                    on_line(line.decode("utf-8", "replace").rstrip("\r"))
                        elif pid == 2:
                            err_tail.append(data.decode("utf-8", "replace"))
                        elif pid == 3:
                            if pending and on_line:
                                on_line(pending.decode("utf-8", "replace"))
                            rc = data[0] if data else 255
                            sig = signal_from_shell_status(rc)
                            return Exit(
                                code=None if sig else rc, signal=sig, output_tail="".join(err_tail)[-2000:]
                            )
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return Exit(code=None, timed_out=True, output_tail="".join(err_tail)[-2000:])
                    if cancel is not None and cancel.is_set():
                        return Exit(code=None, cancelled=True, output_tail="".join(err_tail)[-2000:])
                    sock.settimeout(min(left, 0.25 if cancel is not None else 5.0))
                    try:
                        chunk = sock.recv(256 * 1024)
                    except TimeoutError:
                        continue
                    if not chunk:
                        raise EOFError("the shell stream ended without an exit status")
                    buf += chunk
            except (adbutils.AdbError, EOFError, ConnectionError, OSError) as e:
                lost = DeviceLost(
                    f"connection lost while running {argv[0]}: {type(e).__name__}: {e}",
                    where=self.where,
                    fix=FIX_LOST,
                )
                raise self.why_lost(lost, f"running {argv[0]}") from e
        finally:
            conn.close()

    def alive(self) -> bool:
        """Listed as `device` on its server AND answers a trivial command within 10 s."""
        try:
            rc, out, _ = self.shell("echo edgefarm-alive", timeout_s=10.0)
            return rc == 0 and "edgefarm-alive" in out
        except DeviceError:
            return False


# ---------------------------------------------------------------- inventory glue
