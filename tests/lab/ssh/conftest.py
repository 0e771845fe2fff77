"""A real OpenSSH server on loopback standing in for a Raspberry Pi (throwaway keys, logging in as
ourselves); the board's python is this host's interpreter, so the real litert_lm runs "on the board"."""

from __future__ import annotations

import getpass
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from orchestrator.devices.ssh import SshDevice

SSHD = Path("/usr/sbin/sshd")


def free_port(start: int = 40000) -> int:
    """A TCP port >= start that nothing listens on now."""
    for port in range(start + os.getpid() % 5000, 65000):
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
        return {
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

    def device(self, name: str = "pi-lab", workdir: Path | None = None) -> SshDevice:
        return SshDevice.from_entry(self.entry(name, workdir))


@pytest.fixture(scope="session")
def board(tmp_path_factory) -> Board:
    """sshd -D on 127.0.0.1:<free port >= 40000>, key login only; stopped at the end of the session."""
    for tool in (str(SSHD), shutil.which("ssh-keygen")):
        if not tool or not Path(tool).exists():
            pytest.fail(
                f"{tool or 'ssh-keygen'} missing: `apt-get install -y openssh-server` (scripts/test.sh does)"
            )
    root = tmp_path_factory.mktemp("sshboard")
    os.chmod(root, 0o755)  # sshd's StrictModes checks the folders above authorized_keys
    host_key, client_key = root / "host_ed25519", root / "client_ed25519"
    for key in (host_key, client_key):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    authorized = root / "authorized_keys"
    authorized.write_text((root / "client_ed25519.pub").read_text())
    authorized.chmod(0o600)
    port = free_port()
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
                "Subsystem sftp internal-sftp",
                "MaxSessions 50",
                "LogLevel ERROR",
                "",
            ]
        )
    )
    Path("/run/sshd").mkdir(parents=True, exist_ok=True)
    with open(root / "sshd.log", "wb") as log:
        proc = subprocess.Popen([str(SSHD), "-D", "-e", "-f", str(config), "-p", str(port)], stderr=log)
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    proc.kill()
                    pytest.fail(f"sshd did not start: {(root / 'sshd.log').read_text()}")
                time.sleep(0.05)
        try:
            yield Board("127.0.0.1", port, getpass.getuser(), client_key, root)
        finally:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()


def write_inventory(path: Path, *entries: dict) -> Path:
    path.write_text(json.dumps({"devices": list(entries)}))
    return path
