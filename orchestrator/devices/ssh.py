"""Raspberry Pi / Linux boards over SSH: asyncssh for commands, rsync over ssh for large files.

Commands go over one kept-open asyncssh connection (ssh_link.py). Killing our side of a command
does not stop it on the board, so every `run` is wrapped in the board's `timeout --signal=KILL`
(coreutils), which kills the command's whole process group at its deadline. Pushes skip files
whose sha256 already matches (one `sha256sum` call for all targets); what is left goes with
rsync over the system ssh when it is at least 256 KiB and both sides have rsync, else over SFTP.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import getpass
import math
import os
import queue
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

import asyncssh

from ..errors import DeviceError, DeviceLost, NeedsSetup
from .feed import Feed
from .files import cached_sha256, parse_sha256sum, push_pairs
from .ssh_info import (
    board_info,
    info_script,
    parse_python_probes,
    pick_python,
    python_candidates,
    split_sections,
)
from .ssh_link import CALL_TIMEOUT_S, CONNECT_TIMEOUT_S, Conn, NoSftp, SshLink, exec_get, exec_put, open_sftp
from .types import DeviceInfo, Exit, LineSink, ProgressSink, PushStats

KILL_GRACE_S = 15.0  # our own deadline past the board's `timeout`, for a connection that went quiet
SFTP_BLOCK = 128 * 1024  # larger SFTP blocks break against OpenSSH's sftp-server (notes/boards.md)
RSYNC_MIN_BYTES = 256 * 1024  # smaller pushes go over the open connection: rsync's own ssh login is ~0.4 s
MIN_RATE_BPS = 1 * 2**20  # transfer deadlines assume at least 1 MB/s
SLOW_CALL_S = 120.0  # a short command that hashes files or starts Python (a busy Pi, an emulated one)
_END = object()


def _feed_write(stdin: asyncssh.SSHWriter, text: str) -> None:
    """A feed's text onto the channel (on the link's loop); a channel closed meanwhile drops it: the
    command has ended, and its end is the request's answer (the runner restarted, or the device lost)."""
    if not stdin.is_closing():
        stdin.write(text)


class SshDevice:
    """One Linux board reached over SSH with key-based login."""

    kind = "ssh"  # its row of devices/kinds.py: its runner and what it is

    def __init__(
        self,
        name: str,
        host: str,
        *,
        port: int = 22,
        user: str | None = None,
        identity_file: Path | None = None,
        workdir: PurePosixPath | None = None,
        python: str | None = None,
        backend: str = "cpu",
        threads: int | None = None,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
        call_timeout_s: float = CALL_TIMEOUT_S,
        on_progress: ProgressSink | None = None,
        known_hosts: Path | None = None,
        fallback_for: Sequence[str] = (),
    ) -> None:
        self.name = name
        self.user = user or getpass.getuser()
        key = Path(identity_file).expanduser() if identity_file else None
        self.link = SshLink(
            name, host, port, self.user, key, connect_timeout_s, call_timeout_s, known_hosts_file=known_hosts
        )
        home = PurePosixPath("/root" if self.user == "root" else f"/home/{self.user}")
        self.workdir = PurePosixPath(workdir) if workdir else home / "edgefarm"
        self.python_setting = python  # devices.yaml `python` (None: python3, or the env setup made)
        self.python = python or "python3"  # what runs the runner; info() settles it
        self.fallback_for = tuple(fallback_for)
        self.backend = backend
        self.threads = threads
        self.on_progress = on_progress
        self._remote_rsync: bool | None = None
        self._sftp = True  # False once the board's sshd turned out to have no SFTP subsystem

    @classmethod
    def from_entry(cls, entry: Mapping[str, Any]) -> SshDevice:
        """From a devices.yaml `kind: ssh` entry (host, port, user, identity_file, workdir, python, ...)."""
        key = entry.get("identity_file")
        return cls(
            name=entry["name"],
            host=entry["host"],
            port=int(entry.get("port", 22)),
            user=entry.get("user"),
            identity_file=Path(key) if key else None,
            workdir=PurePosixPath(entry["workdir"]) if entry.get("workdir") else None,
            python=entry.get("python"),
            backend=entry.get("backend", "cpu"),
            threads=entry.get("threads"),
            known_hosts=Path(entry["known_hosts"]) if entry.get("known_hosts") else None,
            fallback_for=entry.get("fallback_for") or (),
        )

    @property
    def where(self) -> str:
        return self.link.where

    def sh(self, argv: Sequence[str], timeout_s: float | None = None) -> tuple[int, str, str]:
        """A short command (argv quoted here) -> (exit code, stdout, stderr)."""
        return self.link.sh(argv, timeout_s)

    def close(self) -> None:
        self.link.close()

    # ---------------------------------------------------------------- info

    def info(self) -> DeviceInfo:
        """Hardware, OS, RAM, free space of workdir, Pi temperature/throttling when vcgencmd exists.

        A board that answers but has no interpreter with litert_lm raises NeedsSetup carrying these
        facts (state "needs setup"), not a bare connection error."""
        info = self.facts()
        if info.extra.get("litert_lm") is True:
            self.python = info.extra.get("python_candidate") or self.python
            return info
        version = str(info.extra.get("python_version") or "")
        if not version:
            what = f"no `{self.python_setting or 'python3'}` on the board"
        else:
            what = f"litert_lm is not installed for the board's python {version}"
        setup = f"`edgefarm setup {shlex.quote(self.name)}` (installs litert-lm-api into {self.workdir}/venv)"
        fix = (
            f"{setup}, or set `python:` in devices.yaml to an interpreter that has it"
            if version
            else f"install Python 3.10+ on the board (`sudo apt install python3 python3-venv`), then {setup}"
        )
        raise NeedsSetup(
            what,
            where=self.where,
            fix=fix,
            info=replace(info, state="needs setup", problem=f"{what}; fix: {fix}"),
        )

    def facts(self) -> DeviceInfo:
        """What the board is, whether or not it can run yet (one command)."""
        pythons = python_candidates(self.workdir, self.python_setting)
        # the probe starts each candidate Python: seconds on a slow or busy board, more than a shell command
        _, out, _ = self.link.script(info_script(self.workdir, pythons), timeout_s=self._slow_call_s())
        sections = split_sections(out)
        chosen = pick_python(parse_python_probes(sections.get("python", "")))
        return board_info(
            self.name,
            f"{self.link.host}:{self.link.port}",
            sections,
            {
                "user": self.user,
                "python": self.python_setting or "",
                "python_candidate": chosen.get("candidate", ""),
                "backend": self.backend,
                "threads": self.threads,
                "fallback_for": list(self.fallback_for),
            },
        )

    def alive(self) -> bool:
        try:
            rc, out, _ = self.sh(["echo", "edgefarm-alive"], timeout_s=10.0)
            return rc == 0 and "edgefarm-alive" in out
        except DeviceError:
            return False

    # ---------------------------------------------------------------- files

    def _slow_call_s(self) -> float:
        """The bound of a short command that still does real work on the board (hashing, starting Python)."""
        return max(self.link.call_timeout_s, SLOW_CALL_S)

    def remote_sha256(self, paths: Sequence[PurePosixPath]) -> dict[str, str]:
        """sha256 of each board file that exists, in one call (missing files are simply absent)."""
        if not paths:
            return {}
        command = shlex.join(["sha256sum", "--", *map(str, paths)]) + " 2>/dev/null"
        _, out, _ = self.link.script(command, timeout_s=self._slow_call_s())
        return parse_sha256sum(out)

    def push(self, local: Path, remote: PurePosixPath) -> PushStats:
        """Push a file or a tree; files whose sha256 already matches are skipped. Batches of at least
        256 KiB go with rsync over ssh when both sides have it, the rest over SFTP."""
        pairs = push_pairs(local, remote, self.where)
        have = self.remote_sha256([r for _, r in pairs])
        stats, todo = PushStats(), []
        for src, dst in pairs:
            size = src.stat().st_size
            if have.get(str(dst)) == cached_sha256(src):
                stats += PushStats(files_skipped=1, bytes_skipped=size)
                if self.on_progress:
                    self.on_progress(str(dst), size, size)
            else:
                todo.append((src, dst))
                stats += PushStats(files=1, bytes_sent=size)
        if not todo:
            return stats
        parents = sorted({str(d.parent) for _, d in todo})
        rc, _, err = self.sh(["mkdir", "-p", "--", *parents])
        if rc != 0:
            raise DeviceError(
                f"cannot create {parents[0]}: {err.strip()}",
                where=self.where,
                fix="check workdir in devices.yaml: it must be writable by the ssh user",
            )
        if (stats.bytes_sent >= RSYNC_MIN_BYTES or not self._sftp) and self._rsync_available():
            self._rsync(local, remote, todo, stats.bytes_sent)
            return stats
        try:
            self._sftp_put(todo, stats.bytes_sent)
        except NoSftp:
            self._sftp = False  # the board's sshd has no `Subsystem sftp`: rsync, or the command channel
            if self._rsync_available():
                self._rsync(local, remote, todo, stats.bytes_sent)
            else:
                self._sftp_put(todo, stats.bytes_sent)
        return stats

    def _rsync_available(self) -> bool:
        if self._remote_rsync is None:
            rc, _, _ = self.link.script("command -v rsync >/dev/null")
            self._remote_rsync = rc == 0
        return self._remote_rsync and bool(shutil.which("rsync")) and bool(shutil.which("ssh"))

    def _rsync(
        self, local: Path, remote: PurePosixPath, todo: list[tuple[Path, PurePosixPath]], size: int
    ) -> None:
        target = f"{self.user}@{self.link.host}:"
        base = ["rsync", "-s", "-I", "--partial", "-e", shlex.join(self.link.ssh_command())]
        for src, dst in todo:
            if self.on_progress:
                self.on_progress(str(dst), 0, src.stat().st_size)
        with tempfile.NamedTemporaryFile("w", suffix=".list") as listing:
            if local.is_dir():
                listing.write("".join(f"{s.relative_to(local).as_posix()}\n" for s, _ in todo))
                listing.flush()
                argv = [*base, f"--files-from={listing.name}", f"{local}/", f"{target}{remote}/"]
            else:
                argv = [*base, str(local), f"{target}{remote}"]
            timeout = self.link.call_timeout_s + size / MIN_RATE_BPS
            try:
                p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
            except subprocess.TimeoutExpired:
                raise DeviceLost(
                    f"rsync of {remote} did not finish within {timeout:.0f} s",
                    where=self.where,
                    fix=self.link.FIX_LOST,
                ) from None
        if p.returncode != 0 and "Host key verification failed" in p.stderr:
            raise DeviceError(
                f"rsync's ssh refused the board's host key (checked against {self.link.known_hosts_file})",
                where=self.where,
                fix=self.link.fix_host_key,
            )
        if p.returncode != 0:
            raise DeviceError(
                f"rsync to {remote} failed (exit {p.returncode}): {p.stderr.strip()[-500:]}",
                where=self.where,
                fix=f"{self.link.fix_connect}; check free space on the board",
            )
        for src, dst in todo:
            if self.on_progress:
                self.on_progress(str(dst), src.stat().st_size, src.stat().st_size)

    def _sftp_put(self, todo: list[tuple[Path, PurePosixPath]], size: int) -> None:
        sink = self.on_progress

        async def go(conn: Conn) -> None:
            if not self._sftp:
                for src, dst in todo:
                    await exec_put(conn, src, str(dst), self.where)
                    if sink:
                        sink(str(dst), src.stat().st_size, src.stat().st_size)
                return
            async with await open_sftp(conn, self.where) as sftp:
                for src, dst in todo:
                    part = str(dst.parent / f".{dst.name}.part")
                    progress = (
                        (lambda _s, _d, sent, total, d=str(dst): sink(d, sent, total)) if sink else None
                    )
                    await sftp.put(str(src), part, block_size=SFTP_BLOCK, progress_handler=progress)
                    await sftp.posix_rename(part, str(dst))

        self.link.call(go, f"push {todo[0][1]}", self.link.call_timeout_s + size / MIN_RATE_BPS)

    def pull(self, remote: PurePosixPath, local: Path) -> int:
        """Copy one board file to the host over SFTP (missing file -> DeviceError)."""
        local = Path(local)
        local.parent.mkdir(parents=True, exist_ok=True)
        part = local.with_name(local.name + ".part")

        async def go(conn: Conn) -> int:
            missing = DeviceError(
                f"no file {remote} on the board",
                where=self.where,
                fix="check the runner's log in the device folder",
            )
            if self._sftp:
                try:
                    sftp = await open_sftp(conn, self.where)
                except NoSftp:
                    self._sftp = False
            if not self._sftp:
                if not await exec_get(conn, str(remote), part, self.where):
                    part.unlink(missing_ok=True)
                    raise missing
                return part.stat().st_size
            async with sftp:
                try:
                    await sftp.get(str(remote), str(part), block_size=SFTP_BLOCK)
                except asyncssh.SFTPNoSuchFile:
                    raise missing from None
            return part.stat().st_size

        size = self.link.call(go, f"pull {remote}", max(self.link.call_timeout_s, 120.0))
        os.replace(part, local)
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
        feed: Feed | None = None,
    ) -> Exit:
        """Run argv (quoted here, once) under the board's `timeout --signal=KILL`; stdout lines go to
        on_line in the caller's thread. Without stdin data the command's stdin stays open while the
        connection lives (written through `feed` while it runs): a runner started with
        `--exit-on-stdin-eof` exits when the connection is lost. When cancel is set we stop waiting (the
        runner adapter then stops the process)."""
        secs = max(1, math.ceil(timeout_s))
        command = shlex.join(["timeout", "--signal=KILL", f"{secs}s", *map(str, argv)])
        lines: queue.Queue = queue.Queue()
        err_tail: deque[str] = deque(maxlen=40)

        async def go(conn: Conn) -> Exit:
            t0 = time.monotonic()
            proc = await conn.create_process(command, encoding="utf-8", errors="replace")
            try:
                if stdin:
                    proc.stdin.write(stdin.decode("utf-8", "replace"))
                    proc.stdin.write_eof()
                elif feed is not None:  # written from the caller's thread: handed to the link's loop
                    loop = asyncio.get_running_loop()
                    feed.attach(lambda text: loop.call_soon_threadsafe(_feed_write, proc.stdin, text))

                async def pump_err() -> None:
                    while chunk := await proc.stderr.read(65536):
                        err_tail.append(chunk)

                async def pump_out() -> None:
                    while line := await proc.stdout.readline():
                        lines.put(line.rstrip("\n"))
                    await proc.wait()

                try:
                    await asyncio.wait_for(asyncio.gather(pump_out(), pump_err()), secs + KILL_GRACE_S)
                except (TimeoutError, asyncio.TimeoutError):
                    return Exit(code=None, timed_out=True, output_tail="".join(err_tail)[-2000:])
            finally:
                if feed is not None:
                    feed.detach()
                proc.close()
                lines.put(_END)
            rc = proc.returncode if proc.returncode is not None else 255
            sig = -rc if rc < 0 else None
            tail = "".join(err_tail)[-2000:]
            if rc == 127 and "timeout" in tail and "not found" in tail:
                raise DeviceError(
                    "the board has no `timeout` command",
                    where=self.where,
                    fix="install coreutils on the board",
                )
            # the board's `timeout` kills with SIGKILL at the deadline (the OOM killer's signal before it)
            timed_out = sig == signal.SIGKILL and time.monotonic() - t0 >= secs - 0.5
            return Exit(code=None if sig else rc, signal=sig, timed_out=timed_out, output_tail=tail)

        fut = asyncio.run_coroutine_threadsafe(self.link.guarded(go, f"run {argv[0]}"), self.link.loop())
        while True:
            try:
                item = lines.get(timeout=0.2)
            except queue.Empty:
                if fut.done() and lines.empty():
                    break
                if cancel is not None and cancel.is_set():
                    fut.cancel()
                    return Exit(code=None, cancelled=True, output_tail="".join(err_tail)[-2000:])
                continue
            if item is _END:
                break
            if on_line is not None:
                on_line(item)
        try:
            return fut.result(self.link.connect_timeout_s + KILL_GRACE_S)
        except concurrent.futures.TimeoutError:
            fut.cancel()
            raise DeviceLost(f"run {argv[0]} did not end", where=self.where, fix=self.link.FIX_LOST) from None
