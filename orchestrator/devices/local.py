"""The `local` device: this host, driven through subprocess."""

from __future__ import annotations

import contextlib
import fcntl
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import DeviceError
from ..fsutil import FILE_MODE, cache_dir, link_new
from .feed import Feed
from .files import cached_sha256, push_pairs
from .types import DeviceInfo, Exit, LineSink, ProgressSink, PushStats

WORKDIR_IN_CACHE = "local"  # this host's work folder: $EDGEFARM_CACHE_DIR/local, else ~/.cache/edgefarm/local


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "Hardware"):
                return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _ram_mb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024.0, 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


def _os_name() -> str:
    try:
        fields = dict(
            line.split("=", 1) for line in Path("/etc/os-release").read_text().splitlines() if "=" in line
        )
        return fields.get("PRETTY_NAME", "").strip('"') or platform.platform()
    except OSError:
        return platform.platform()


class LocalDevice:
    """This host as a device: files are copied (or linked), commands run as child processes."""

    kind = "local"  # its row of devices/kinds.py: its runner and what it is

    def __init__(
        self,
        name: str = "this-host",
        workdir: Path | None = None,
        python: str | None = None,
        backend: str = "cpu",
        threads: int | None = None,
    ) -> None:
        self.name = name
        folder = Path(workdir).expanduser() if workdir else cache_dir() / WORKDIR_IN_CACHE
        self.workdir = PurePosixPath(str(folder))
        self.python = python or os.environ.get("EDGEFARM_PYTHON") or _default_python()
        self.backend = backend
        self.threads = threads
        self.on_progress: ProgressSink | None = None

    @classmethod
    def from_entry(cls, entry: Mapping[str, Any]) -> LocalDevice:
        return cls(
            name=entry.get("name", "this-host"),
            workdir=Path(entry["workdir"]) if entry.get("workdir") else None,
            python=entry.get("python"),
            backend=entry.get("backend", "cpu"),
            threads=entry.get("threads"),
        )

    def info(self) -> DeviceInfo:
        existing = Path(str(self.workdir))
        while not existing.exists():
            existing = existing.parent
        usage = shutil.disk_usage(existing)
        return DeviceInfo(
            name=self.name,
            kind="local",
            serial=platform.node(),
            model=platform.node(),
            cpu=_cpu_model(),
            abi=platform.machine(),
            cores=os.cpu_count(),
            ram_mb=_ram_mb(),
            os=_os_name(),
            build=platform.release(),
            free_storage_mb=round(usage.free / 2**20, 1),
            extra={"python": self.python, "backend": self.backend, "threads": self.threads},
        )

    def push(self, local: Path, remote: PurePosixPath) -> PushStats:
        """Copy a file or tree; a file whose sha256 already matches is skipped."""
        stats = PushStats()
        for src, remote_file in push_pairs(local, remote, self.name):
            stats += self._copy(src, Path(str(remote_file)))
        return stats

    def _copy(self, src: Path, dst: Path) -> PushStats:
        """Copy src to dst unless dst holds the same bytes already.

        Runs sharing a workdir (three runs started together with a model not cached yet) take a lock
        per file (`.NAME.lock` next to it) and re-check under it, so one copies and the others skip;
        the copy goes to a unique temp name and is renamed into place, so no run ever sees half a file.
        """
        size = src.stat().st_size
        if self.on_progress:
            self.on_progress(str(dst), 0, size)

        def same() -> bool:
            if not dst.is_file() or dst.stat().st_size != size:
                return False
            return os.path.samefile(src, dst) or cached_sha256(dst) == cached_sha256(src)

        copied = False
        try:
            if link_new(src, dst):  # first time here: a hard link, no bytes copied (1 ms a file copied)
                copied = True
            elif not same():
                dst.parent.mkdir(parents=True, exist_ok=True)
                with open(dst.with_name(f".{dst.name}.lock"), "a") as lock:
                    fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes (or the process dies)
                    if not same():  # another run may have copied it while this one waited
                        fd, tmp = tempfile.mkstemp(prefix=f".{dst.name}.", suffix=".part", dir=dst.parent)
                        os.close(fd)
                        try:
                            shutil.copyfile(src, tmp)
                            os.chmod(tmp, FILE_MODE)
                            os.replace(tmp, dst)
                        except BaseException:
                            Path(tmp).unlink(missing_ok=True)
                            raise
                        copied = True
        except OSError as e:
            raise DeviceError(
                f"cannot copy {src.name} to {dst}: {e.strerror or e}",
                where=self.name,
                fix="free space (or fix permissions) in the device's work folder, or set `workdir:` for it "
                "in devices.yaml",
            ) from e
        if self.on_progress:
            self.on_progress(str(dst), size, size)
        if copied:
            return PushStats(files=1, bytes_sent=size)
        return PushStats(files_skipped=1, bytes_skipped=size)

    def pull(self, remote: PurePosixPath, local: Path) -> int:
        src = Path(str(remote))
        if not src.is_file():
            raise DeviceError(
                f"no file {remote} on the device",
                where=self.name,
                fix="check the runner's log in the device folder",
            )
        Path(local).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, local)
        return src.stat().st_size

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout_s: float,
        on_line: LineSink | None = None,
        cancel: threading.Event | None = None,
        feed: Feed | None = None,
    ) -> Exit:
        """Run argv as a child in its own process group; stdout lines stream to on_line (killed after
        timeout_s, or when cancel is set).

        Its stdin is a pipe only edgefarm holds, written only through `feed`: when edgefarm dies, even by
        SIGKILL, the pipe closes and a runner started with `--exit-on-stdin-eof` exits, so no runner
        outlives its edgefarm. Its stderr is read from the start (the last lines are kept), so a child that
        logs a lot never blocks on a full pipe."""
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            start_new_session=True,
        )
        err_tail: deque[str] = deque(maxlen=40)
        err_reader = threading.Thread(
            target=lambda: err_tail.extend(proc.stderr), daemon=True, name=f"stderr:{self.name}"
        )
        err_reader.start()
        if feed is not None:
            feed.attach(lambda text: (proc.stdin.write(text), proc.stdin.flush()))
        fired = threading.Event()

        def on_timeout() -> None:
            fired.set()
            _kill_group(proc)

        timer = threading.Timer(timeout_s, on_timeout)
        timer.start()
        cancelled = threading.Event()
        if cancel is not None:

            def watch_cancel() -> None:
                while proc.poll() is None:
                    if cancel.wait(0.1):
                        cancelled.set()
                        _kill_group(proc)
                        return

            threading.Thread(target=watch_cancel, daemon=True, name=f"cancel:{self.name}").start()
        try:
            for line in proc.stdout:
                if on_line is not None:
                    on_line(line.rstrip("\n"))
            rc = proc.wait()
        finally:
            if feed is not None:
                feed.detach()
            timer.cancel()
            if proc.poll() is None:
                _kill_group(proc)
                proc.wait()
            with contextlib.suppress(OSError):
                proc.stdin.close()
        err_reader.join(timeout=1.0)
        return Exit(
            code=rc if rc >= 0 else None,
            signal=-rc if rc < 0 else None,
            timed_out=fired.is_set(),
            output_tail="".join(err_tail)[-2000:],
            cancelled=cancelled.is_set(),
        )

    def alive(self) -> bool:
        return True


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _default_python() -> str:
    return sys.executable
