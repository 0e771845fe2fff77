"""A private REAL adb server for the lab (the binary shipped in the adbutils wheel).

Never touches a user's 5037: `adb -P PORT nodaemon server`, HOME in a temp folder (the server
writes `$HOME/.android/adbkey`), ANDROID_ADB_SERVER_PORT set for every child.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import adbutils

from .phone import FakePhone, free_port


def adb_binary() -> Path:
    path = Path(adbutils.__file__).parent / "binaries" / "adb"
    if not path.is_file():
        raise RuntimeError(f"adb binary missing at {path}: reinstall adbutils (`pip install -U adbutils`)")
    return path


class AdbServer:
    """`adb -P port nodaemon server` with its own HOME; stands in for one farm host."""

    def __init__(self, home: Path, port: int | None = None) -> None:
        self.home = home
        self.port = port or free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(HOME=str(self.home), ANDROID_ADB_SERVER_PORT=str(self.port), ADB_MDNS_OPENSCREEN="0")
        env.pop("ANDROID_SERIAL", None)
        return env

    def start(self, timeout_s: float = 15.0) -> AdbServer:
        self.home.mkdir(parents=True, exist_ok=True)
        log = open(self.home / "adb-server.log", "wb")  # noqa: SIM115 - lives as long as the server
        self.proc = subprocess.Popen(
            [str(adb_binary()), "-P", str(self.port), "nodaemon", "server"],
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"adb server exited: {(self.home / 'adb-server.log').read_text()[-2000:]}")
            # A raw socket probe: adbutils would run `adb start-server` on 5037 if nothing answers.
            with socket.socket() as s:
                s.settimeout(0.5)
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return self
            time.sleep(0.1)
        raise RuntimeError(f"adb server on {self.port} did not answer within {timeout_s} s")

    def client(self) -> adbutils.AdbClient:
        return adbutils.AdbClient("127.0.0.1", self.port, socket_timeout=10)

    def adb(self, *args: str, timeout_s: float = 20.0) -> str:
        """The adb CLI against this server (what a user would type)."""
        p = subprocess.run(
            [str(adb_binary()), "-P", str(self.port), *args],
            check=False,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
        return p.stdout + p.stderr

    def connect(self, phone: FakePhone, *, state: str = "device", timeout_s: float = 15.0) -> str:
        """`adb connect` the phone and wait until the server lists it in `state`; returns serial."""
        out = self.client().connect(phone.address, timeout=timeout_s)
        # A phone that never accepts our key: adb says "failed to authenticate" yet lists it.
        ok = "connected to" in out or (state == "unauthorized" and "failed to authenticate" in out)
        if not ok:
            raise RuntimeError(f"adb connect {phone.address} failed: {out!r}")
        self.wait_state(phone.address, state, timeout_s=timeout_s)
        return phone.address

    def wait_state(self, serial: str, state: str, *, timeout_s: float = 15.0) -> None:
        deadline = time.monotonic() + timeout_s
        seen = ""
        while time.monotonic() < deadline:
            seen = {d.serial: d.state for d in self.client().list()}.get(serial, "absent")
            if seen == state:
                return
            time.sleep(0.1)
        raise RuntimeError(f"{serial} stayed {seen!r}, wanted {state!r} on adb server {self.port}")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, 15)
                self.proc.wait(timeout=5)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(self.proc.pid, 9)
                self.proc.wait(timeout=5)
