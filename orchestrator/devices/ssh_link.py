"""One kept-open asyncssh connection to a board, driven from any thread through a private loop.

The farm's workers are threads and the Device interface is synchronous, so each board gets an
asyncio loop in a daemon thread; calls hop onto it with a hard deadline. asyncssh and OS errors
never leave this module: they become DeviceError / DeviceLost naming the board, with the fix.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import shlex
import threading
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import asyncssh

from ..errors import DeviceError, DeviceLost, EdgefarmError

CONNECT_TIMEOUT_S = 10.0  # a board that does not answer is an error, not a hang
CALL_TIMEOUT_S = 30.0  # one short command (info, sha256sum of a few files, mkdir)
KNOWN_HOSTS = Path("~/.ssh/known_hosts")
T = TypeVar("T")
Conn = asyncssh.SSHClientConnection


class SshLink:
    """Connection settings of one board plus its live connection (opened on first use)."""

    def __init__(
        self,
        name: str,
        host: str,
        port: int,
        user: str,
        identity_file: Path | None,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
        call_timeout_s: float = CALL_TIMEOUT_S,
        known_hosts_file: Path | None = None,
    ) -> None:
        self.name = name
        # ONE known_hosts for the command channel (asyncssh) AND file copies (the system ssh under
        # rsync): the system ssh would otherwise read the account's home from passwd, not $HOME
        self.known_hosts_file = (known_hosts_file or KNOWN_HOSTS).expanduser()
        self.host = host
        self.port = port
        self.user = user
        self.identity_file = identity_file
        self.connect_timeout_s = connect_timeout_s
        self.call_timeout_s = call_timeout_s
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_lock = threading.Lock()
        self._conn: asyncssh.SSHClientConnection | None = None
        self._conn_lock: asyncio.Lock | None = None

    @property
    def where(self) -> str:
        return f"{self.name} (ssh {self.user}@{self.host}:{self.port})"

    @property
    def target(self) -> str:
        """`user@host`, quoted for a shell: every hint below pastes as exactly one command."""
        return shlex.quote(f"{self.user}@{self.host}")

    @property
    def fix_connect(self) -> str:
        return (
            f"check host/port in devices.yaml and that the board is on with sshd running "
            f"(try `ssh -p {self.port} {self.target} true`)"
        )

    @property
    def fix_auth(self) -> str:
        key = f"-i {shlex.quote(str(self.identity_file))} " if self.identity_file else ""
        return (
            f"install your public key on the board: `ssh-copy-id {key}-p {self.port} {self.target}` "
            "(and set identity_file in devices.yaml to the private key)"
        )

    @property
    def fix_host_key(self) -> str:
        known = shlex.quote(str(self.known_hosts_file))
        return (
            f"if the board was reinstalled: `ssh-keygen -f {known} -R {shlex.quote(self.host_pattern)}`, "
            f"then `ssh-keyscan -p {self.port} {shlex.quote(self.host)} >> {known}`; otherwise find out "
            "who answers at that address"
        )

    @property
    def host_pattern(self) -> str:
        return self.host if self.port == 22 else f"[{self.host}]:{self.port}"

    FIX_LOST = "check the board's power and network; rerun with --resume to continue where it stopped"

    # ---------------------------------------------------------------- the private loop

    def loop(self) -> asyncio.AbstractEventLoop:
        with self._loop_lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, daemon=True, name=f"ssh:{self.name}").start()
                self._loop = loop
            return self._loop

    def known_hosts(self) -> str | None:
        """The known_hosts file when it lists this board (then its key is verified), else None."""
        path = self.known_hosts_file
        if not path.is_file():
            return None
        try:
            keys = asyncssh.match_known_hosts(str(path), self.host, None, self.port)
        except (OSError, ValueError, asyncssh.Error):
            return None
        return str(path) if keys and (keys[0] or keys[1]) else None

    async def _connect(self) -> asyncssh.SSHClientConnection:
        if self._conn_lock is None:
            self._conn_lock = asyncio.Lock()
        async with self._conn_lock:
            if self._conn is not None and not self._conn.is_closed():
                return self._conn
            options: dict[str, Any] = {"known_hosts": self.known_hosts()}
            if self.identity_file:
                if not self.identity_file.is_file():
                    raise DeviceError(
                        f"identity_file {self.identity_file} does not exist",
                        where=self.where,
                        fix="point identity_file in devices.yaml at your private key (e.g. ~/.ssh/id_ed25519)",
                    )
                options["client_keys"] = [str(self.identity_file)]
            try:
                self._conn = await asyncio.wait_for(
                    asyncssh.connect(
                        self.host,
                        self.port,
                        username=self.user,
                        connect_timeout=self.connect_timeout_s,
                        keepalive_interval=15,
                        **options,
                    ),
                    self.connect_timeout_s + 1,
                )
            except asyncssh.PermissionDenied as e:
                raise DeviceError(
                    f"login as {self.user} refused: {e.reason}", where=self.where, fix=self.fix_auth
                )
            except asyncssh.HostKeyNotVerifiable as e:
                raise DeviceError(
                    f"host key does not match {self.known_hosts_file}: {e.reason}",
                    where=self.where,
                    fix=self.fix_host_key,
                )
            except (TimeoutError, asyncio.TimeoutError):
                raise DeviceError(
                    f"no answer within {self.connect_timeout_s:g} s", where=self.where, fix=self.fix_connect
                )
            except (OSError, asyncssh.Error) as e:
                reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
                raise DeviceError(
                    f"cannot connect: {type(e).__name__}: {reason}", where=self.where, fix=self.fix_connect
                )
            return self._conn

    async def guarded(self, fn: Callable[[asyncssh.SSHClientConnection], Awaitable[T]], what: str) -> T:
        conn = await self._connect()
        try:
            return await fn(conn)
        except EdgefarmError:
            raise
        except (asyncssh.ConnectionLost, asyncssh.DisconnectError, ConnectionError, EOFError) as e:
            self._conn = None
            raise DeviceLost(f"{what}: connection lost ({e})", where=self.where, fix=self.FIX_LOST) from e
        except (asyncssh.Error, OSError) as e:
            raise DeviceError(
                f"{what} failed: {type(e).__name__}: {e}", where=self.where, fix=self.fix_connect
            ) from e

    def call(
        self, fn: Callable[[asyncssh.SSHClientConnection], Awaitable[T]], what: str, timeout_s: float
    ) -> T:
        """Run fn(connection) on the private loop, from any thread, with a hard deadline."""
        fut = asyncio.run_coroutine_threadsafe(self.guarded(fn, what), self.loop())
        try:
            return fut.result(timeout_s + self.connect_timeout_s + 2)
        except concurrent.futures.TimeoutError:
            fut.cancel()
            raise DeviceLost(
                f"{what} did not finish within {timeout_s:g} s (board frozen or gone)",
                where=self.where,
                fix=self.FIX_LOST,
            ) from None

    def sh(self, argv: Sequence[str], timeout_s: float | None = None) -> tuple[int, str, str]:
        """A short command (argv quoted here) -> (exit code, stdout, stderr)."""
        return self.script(shlex.join(str(a) for a in argv), timeout_s)

    def script(self, command: str, timeout_s: float | None = None) -> tuple[int, str, str]:
        """A short command line WE built (parts quoted with shlex), never dataset text."""
        t = timeout_s or self.call_timeout_s

        async def go(conn: asyncssh.SSHClientConnection) -> tuple[int, str, str]:
            r = await asyncio.wait_for(conn.run(command, check=False, stdin=asyncssh.DEVNULL), t)
            rc = r.exit_status if r.exit_status is not None else 255
            return rc, str(r.stdout or ""), str(r.stderr or "")

        return self.call(go, f"`{command[:60]}`", t)

    def close(self) -> None:
        """Close the connection (the next call reconnects)."""
        if self._loop is not None and self._conn is not None:
            conn, self._conn = self._conn, None
            self._loop.call_soon_threadsafe(conn.close)

    def ssh_command(self) -> list[str]:
        """The system ssh command rsync uses (-e): key login only, same host key policy as asyncssh."""
        argv = [
            "ssh",
            "-p",
            str(self.port),
            "-o",
            "BatchMode=yes",
            "-o",
            f"ConnectTimeout={self.connect_timeout_s:g}",
        ]
        if self.identity_file:
            argv += ["-i", str(self.identity_file), "-o", "IdentitiesOnly=yes"]
        listed = self.known_hosts()
        if listed is None:  # not listed: accepted without being recorded (like asyncssh here)
            argv += ["-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null"]
        else:  # the very file asyncssh verified against, never the account's ~ from passwd
            argv += ["-o", "StrictHostKeyChecking=yes", "-o", f"UserKnownHostsFile={listed}"]
        return [*argv, "-o", "GlobalKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR"]


# ---------------------------------------------------------------- files without SFTP

FIX_NO_SFTP = (
    "add `Subsystem sftp /usr/lib/openssh/sftp-server` (or `internal-sftp`) to the board's "
    "/etc/ssh/sshd_config and restart sshd; meanwhile files go over rsync or the ssh command channel"
)


class NoSftp(DeviceError):
    """The board's sshd offers no SFTP subsystem (its sshd_config has no `Subsystem sftp` line)."""


async def open_sftp(conn: Conn, where: str) -> asyncssh.SFTPClient:
    """An SFTP client, or NoSftp naming SFTP (asyncssh says only "Session request failed")."""
    try:
        return await conn.start_sftp_client()
    except asyncssh.ChannelOpenError as e:
        raise NoSftp(
            f"the board's sshd offers no SFTP subsystem ({e.reason})", where=where, fix=FIX_NO_SFTP
        ) from e


async def exec_put(conn: Conn, src: Path, dst: str, where: str) -> None:
    """Copy a file over the ssh command channel (`cat` into a .part file, then renamed), as scp's
    legacy protocol does: for boards without SFTP (and without rsync)."""
    part = f"{dst.rsplit('/', 1)[0]}/.{dst.rsplit('/', 1)[-1]}.part"
    command = shlex.join(["sh", "-c", 'cat > "$1" && mv -f -- "$1" "$2"', "sh", part, dst])
    r = await conn.run(command, check=False, stdin=str(src), encoding=None)
    if r.exit_status != 0:
        err = (r.stderr or b"").decode("utf-8", "replace").strip()[-300:]
        raise DeviceError(f"copy of {dst} without SFTP failed: {err}", where=where,
                          fix="check free space on the board and that workdir in devices.yaml is writable")  # fmt: skip


async def exec_get(conn: Conn, remote: str, local: Path, where: str) -> bool:
    """Copy a board file to `local` over the command channel (`cat`); False when it does not exist."""
    r = await conn.run(shlex.join(["cat", "--", remote]), check=False, stdout=str(local), encoding=None)
    return r.exit_status == 0
