"""A real PostgreSQL server for the lab (Debian's `postgresql` package): a fresh cluster in a temp
folder, owned and run by an unprivileged user (PostgreSQL refuses to run as root: when the suite runs
as root it drops to `nobody` with setpriv), listening on a private loopback port and a socket in that
folder only; trust authentication for the lab's own user. Stopped (fast shutdown) and removed after."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

USER = "edgefarm"
START_TIMEOUT_S = 60


def binaries() -> Path | None:
    """The folder of initdb/pg_ctl/postgres: Debian's /usr/lib/postgresql/<major>/bin, else PATH."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("pg_ctl")
    return Path(on_path).resolve().parent if on_path else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _reachable_by_others(folder: Path) -> bool:
    """Whether `nobody` can walk down to `folder` (every folder on the way has o+x)."""
    return all(os.stat(p).st_mode & 0o001 for p in [folder, *folder.parents])


def _server_parent() -> Path:
    """Where the server's folder goes: the temp folder, unless the server's owner cannot reach it (as
    root under a private TMPDIR, e.g. `.ci/run`'s mode-700 mktemp folder), then /tmp."""
    for candidate in (Path(tempfile.gettempdir()), Path("/tmp")):
        if os.geteuid() != 0 or _reachable_by_others(candidate):
            return candidate
    raise PermissionError(
        f"neither {tempfile.gettempdir()} nor /tmp can be reached by `nobody`, who runs "
        "the lab's PostgreSQL when the suite runs as root: set TMPDIR to a folder with o+x"
    )


def _as_owner(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv
    return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--", *argv]


@dataclass(frozen=True)
class Server:
    port: int

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def new_database(self, name: str) -> str:
        """A fresh, empty database on the server; its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


@contextmanager
def running_server() -> Iterator[Server]:
    bin_dir = binaries()
    if bin_dir is None:
        raise FileNotFoundError("no PostgreSQL binaries (apt-get install postgresql)")
    folder = Path(tempfile.mkdtemp(prefix="edgefarm-pg-", dir=_server_parent()))
    data, log = folder / "data", folder / "server.log"
    if os.geteuid() == 0:
        os.chown(folder, 65534, 65534)
    port = _free_port()
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "HOME": str(folder), "TZ": "UTC"}
    try:
        subprocess.run(_as_owner([str(bin_dir / "initdb"), "-D", str(data), "-U", USER, "--auth=trust",
                                  "--no-sync", "-E", "UTF8", "--locale=C"]),
                       check=True, capture_output=True, env=env, cwd=folder, timeout=120)  # fmt: skip
        options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=40"
        subprocess.run(_as_owner([str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options,
                                  "-w", "-t", str(START_TIMEOUT_S), "start"]),
                       check=True, capture_output=True, env=env, cwd=folder, timeout=START_TIMEOUT_S + 10)  # fmt: skip
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:  # pg_ctl -w waits for the socket; wait for the TCP port too
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield Server(port)
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run(_as_owner([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]),
                           capture_output=True, env=env, cwd=folder, timeout=60, check=False)  # fmt: skip
        shutil.rmtree(folder, ignore_errors=True)
