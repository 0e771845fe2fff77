"""A private network namespace for this test session: only loopback, nothing reaches the LAN.

Linux keeps namespaces per thread: a thread that called unshare(CLONE_NEWNET) or setns() lives in
the namespace, and every process it starts (and every socket it opens) does too. `NetNs` owns
one such namespace and a few worker threads that joined it; the lab's adb servers, phones, Ray
nodes and the `edgefarm` commands under test are all started from those threads. Stopping is
exact: every process whose /proc/PID/ns/net is this namespace is ours, and only those are killed.
Needs root (CAP_SYS_ADMIN), as the lab's other namespaces do."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)} (the cluster lab needs root for a network namespace)")


class NetNs:
    def __init__(self, workers: int = 4) -> None:
        made: dict[str, object] = {}

        def make() -> None:  # a throw-away thread: unshare moves only this thread
            try:
                _check(_libc.unshare(CLONE_NEWNET), "unshare(CLONE_NEWNET)")
                made["fd"] = os.open(f"/proc/self/task/{threading.get_native_id()}/ns/net", os.O_RDONLY)
                subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
            except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
                made["error"] = e

        t = threading.Thread(target=make)
        t.start()
        t.join()
        if "error" in made:
            raise made["error"]  # type: ignore[misc]
        self.fd: int = made["fd"]  # type: ignore[assignment]
        self.inode = os.fstat(self.fd).st_ino
        self._pool = ThreadPoolExecutor(workers, "netns", initializer=self._join)

    def _join(self) -> None:
        _check(_libc.setns(self.fd, CLONE_NEWNET), "setns")

    def call(self, fn, *args, **kwargs):
        """Run fn in the namespace (processes it starts and sockets it opens are inside)."""
        return self._pool.submit(fn, *args, **kwargs).result()

    def popen(self, argv: list[str], **kwargs) -> subprocess.Popen:
        return self.call(subprocess.Popen, argv, **kwargs)

    def run(self, argv: list[str], **kwargs) -> subprocess.CompletedProcess:
        return self.call(subprocess.run, argv, **kwargs)

    def pids(self) -> list[int]:
        """Every process living in this namespace."""
        found = []
        for p in Path("/proc").iterdir():
            if p.name.isdigit():
                try:
                    if os.stat(p / "ns" / "net").st_ino == self.inode:
                        found.append(int(p.name))
                except OSError:
                    continue
        return found

    def kill_all(self, grace_s: float = 5.0) -> None:
        """TERM every process in the namespace, then KILL what is left after `grace_s`."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in self.pids():
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + grace_s
            while self.pids() and time.monotonic() < deadline:
                time.sleep(0.1)

    def close(self, grace_s: float = 5.0) -> None:
        self.kill_all(grace_s)
        self._pool.shutdown()
        os.close(self.fd)
