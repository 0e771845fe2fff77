"""A real OpenSSH server on loopback standing in for a Raspberry Pi (throwaway keys, logging in as
ourselves); the board's python is this host's interpreter, so the real litert_lm runs "on the board"."""

from __future__ import annotations

import contextlib
import functools
import getpass
import http.server
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from orchestrator.devices.ssh import SshDevice

from . import aarch64

SSHD = Path("/usr/sbin/sshd")
SFTP_SERVER = Path("/usr/lib/openssh/sftp-server")


def free_port(start: int = 40000) -> int:
    """A TCP port >= start that nothing listens on now, picked at random: test sessions running side by
    side (pytest-xdist workers) must not all try the same one first."""
    for _ in range(500):
        port = random.randrange(start, 65000)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port")


@dataclass(frozen=True)
class Board:
    """What a devices.yaml entry needs to reach the loopback board."""

    host: str
    port: int
    user: str
    key: Path
    root: Path  # temp folder of this session (workdirs go below it)

    def entry(self, name: str = "pi-lab", workdir: Path | None = None, **extra) -> dict:
        """A devices.yaml entry; `python=None` leaves `python` out (the board's own python3)."""
        entry = {
            "name": name,
            "kind": "ssh",
            "host": self.host,
            "port": self.port,
            "user": self.user,
            "identity_file": str(self.key),
            "workdir": str(workdir or self.root / "boards" / name),
            "python": sys.executable,
            **extra,
        }
        return {k: v for k, v in entry.items() if v is not None}

    def device(self, name: str = "pi-lab", workdir: Path | None = None) -> SshDevice:
        return SshDevice.from_entry(self.entry(name, workdir))


def require_sshd() -> None:
    for tool in (str(SSHD), shutil.which("ssh-keygen")):
        if not tool or not Path(tool).exists():
            pytest.fail(
                f"{tool or 'ssh-keygen'} missing: `apt-get install -y openssh-server` (scripts/test.sh does)"
            )


def keygen(path: Path) -> Path:
    for old in (path, path.with_name(path.name + ".pub")):
        old.unlink(missing_ok=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    return path


def _start_sshd(config: Path, log, log_path: Path) -> tuple[subprocess.Popen, int]:
    """`sshd -D` on a free port, answering; a port another session took meanwhile means another port."""
    for _ in range(5):
        port = free_port()
        proc = subprocess.Popen([str(SSHD), "-D", "-e", "-f", str(config), "-p", str(port)], stderr=log)
        deadline = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return proc, port
            except OSError:
                time.sleep(0.05)
        proc.kill()
        proc.wait()
        if "Address already in use" not in log_path.read_text():
            break
    pytest.fail(f"sshd did not start: {log_path.read_text()}")


@contextlib.contextmanager
def sshd(root: Path, extra: Sequence[str] = (), subsystem: bool = True) -> Iterator[Board]:
    """sshd -D on 127.0.0.1:<free port >= 40000> with fresh host and client keys, key login only;
    `extra` lines go into its sshd_config (e.g. `SetEnv PATH=...` for the board's sessions)."""
    require_sshd()
    root.mkdir(parents=True, exist_ok=True)
    os.chmod(root, 0o755)  # sshd's StrictModes checks the folders above authorized_keys
    host_key, client_key = keygen(root / "host_ed25519"), keygen(root / "client_ed25519")
    authorized = root / "authorized_keys"
    authorized.write_text((root / "client_ed25519.pub").read_text())
    authorized.chmod(0o600)
    config = root / "sshd_config"
    config.write_text(
        "\n".join(
            [
                "ListenAddress 127.0.0.1",
                f"HostKey {host_key}",
                f"AuthorizedKeysFile {authorized}",
                f"PidFile {root / 'sshd.pid'}",
                "UsePAM no",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "PermitRootLogin prohibit-password",
                "StrictModes no",
                *(["Subsystem sftp internal-sftp"] if subsystem else []),
                "MaxSessions 50",
                "LogLevel ERROR",
                *extra,
                "",
            ]
        )
    )
    Path("/run/sshd").mkdir(parents=True, exist_ok=True)
    with open(root / "sshd.log", "wb") as log:
        proc, port = _start_sshd(config, log, root / "sshd.log")
        try:
            yield Board("127.0.0.1", port, getpass.getuser(), client_key, root)
        finally:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()


def known_hosts(home: Path, board: Board, pub: Path) -> None:
    """$HOME/.ssh/known_hosts listing `pub` as the board's host key (and nothing else)."""
    ssh = home / ".ssh"
    ssh.mkdir(parents=True, exist_ok=True)
    key = " ".join(pub.read_text().split()[:2])
    (ssh / "known_hosts").write_text(f"[{board.host}]:{board.port} {key}\n")


@pytest.fixture(scope="session")
def board(tmp_path_factory) -> Iterator[Board]:
    """The x86_64 board: its python is this host's interpreter (litert_lm already there)."""
    with sshd(tmp_path_factory.mktemp("sshboard")) as b:
        yield b


def write_inventory(path: Path, *entries: dict) -> Path:
    path.write_text(json.dumps({"devices": list(entries)}))
    return path


@dataclass(frozen=True)
class ArmBoard:
    """The aarch64 board: a real sshd whose sessions find the aarch64 python3 first on PATH."""

    board: Board
    top: Path  # the cached rootfs folder (rootfs/, wheels/)
    index_url: str  # the board's own pip index (PIP_INDEX_URL in its sessions)
    old_python: Path  # Debian 11's python3.9 (Raspberry Pi OS 11), aarch64 too

    def entry(self, name: str = "pi5-arm", workdir: Path | None = None, **extra) -> dict:
        return self.board.entry(name, workdir, python=None, **extra)


VCGENCMD = """#!/bin/sh
# Stand-in for a Pi's vcgencmd (firmware tool): the replies of a real Pi 5 at rest.
case "$1 $2" in
  "measure_temp ") echo "temp=51.6'C" ;;
  "get_throttled ") echo "throttled=0x0" ;;
  "measure_clock arm") echo "frequency(0)=2400000000" ;;
  *) echo "error=1 error_msg=\"Command not registered\"" ; exit 1 ;;
esac
"""


INDEX_HITS: list[str] = []  # paths the lab's pip index served (a board's pip really used it)


class _IndexHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:
        INDEX_HITS.append(self.path)


@contextlib.contextmanager
def pip_index(wheels: Path, root: Path) -> Iterator[str]:
    """A PEP 503 index on loopback serving the wheels (a folder listing per project, as pip reads it)."""
    project = root / "simple" / "litert-lm-api"
    project.mkdir(parents=True, exist_ok=True)
    for w in wheels.glob("*.whl"):
        target = project / w.name
        if not target.exists():
            os.link(w, target)
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_IndexHandler, directory=str(root))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple/"
    finally:
        server.shutdown()


@pytest.fixture(scope="session")
def arm_board(tmp_path_factory) -> Iterator[ArmBoard]:
    """Debian arm64 python3.11 under qemu-aarch64 (cortex-a76) behind a real sshd; no litert_lm yet."""
    try:
        top, old = aarch64.build(), aarch64.build(old=True)
    except aarch64.LabSetupError as e:
        pytest.fail(f"the aarch64 lab board cannot be built on this machine: {e}")
    root = tmp_path_factory.mktemp("armboard")
    bin_dir = root / "bin"
    aarch64.python3_wrapper(top, bin_dir)
    old_python = aarch64.python3_wrapper(old, root / "bin-py39", aarch64.OLD_PYTHON)
    (bin_dir / "vcgencmd").write_text(VCGENCMD)
    (bin_dir / "vcgencmd").chmod(0o755)
    with pip_index(top / "wheels", root / "index") as url:
        # every session's command runs with the board's PATH, whatever the account's shell rc files do;
        # PIP_NO_COMPILE: the board's pip leaves .pyc files to the imports that need them (docs/testing.md)
        login = root / "board-login"
        login.write_text(
            "#!/bin/sh\n"
            f"PATH={bin_dir}:/usr/local/bin:/usr/bin:/bin; PIP_INDEX_URL={url}; PIP_NO_COMPILE=1\n"
            "export PATH PIP_INDEX_URL PIP_NO_COMPILE\n"
            'exec /bin/sh -c "$SSH_ORIGINAL_COMMAND"\n'
        )
        login.chmod(0o755)
        config = [f"ForceCommand {login}", f"Subsystem sftp {SFTP_SERVER}"]
        with sshd(root / "sshd", config, subsystem=False) as b:
            yield ArmBoard(b, top, url, old_python)
