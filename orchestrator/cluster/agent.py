"""The agent on a farm host: one long-lived Ray actor per host, pinned by its `farmhost:NAME`
resource. A plain class here (Ray wraps it in `connect.start_agents`), so it is tested without Ray."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

from ..devices.kinds import KINDS, kind_spec
from ..fsutil import cache_dir
from ..inventory import load_inventory, select_usable
from ..session import DeviceJob
from .hostcache import CACHE_IN_CACHE_DIR, HostCache
from .remote_session import localize, run_here
from .types import Blob, ClusterError, HostDevices, Pins, Received


class FarmHostAgent:
    def __init__(self, host: str, cache_root: Path | None = None, inventory: Path | None = None) -> None:
        self.host = host
        self._cache_root = cache_root
        self._inventory = inventory
        self._taken: dict[str, tuple[int, int]] = {}  # sha256 -> (bytes, chunks) received this life
        self._lock = threading.Lock()  # the actor is threaded: transfers and sessions run side by side
        self._devices: dict[str, object] = {}  # name -> Device, from the last listing
        self._stops: dict[str, threading.Event] = {}
        self._verified: set[str] = set()  # sha256 of cached files hashed whole in this agent's life (run)
        self._damaged: dict[str, str] = {}  # sha256 -> the note that its cached copy was fetched again

    @property
    def cache(self) -> HostCache:
        return HostCache(self._cache_root or cache_dir() / CACHE_IN_CACHE_DIR, self.host)

    def hello(self) -> dict[str, object]:
        """Who and where the agent is (for `edgefarm devices --cluster` and the run's host list)."""
        return {"host": self.host, "pid": os.getpid(), "hostname": socket.gethostname(),
                "cache": str(self.cache.root)}  # fmt: skip

    def devices(self) -> HostDevices:
        """This host's phones (through its own local adb server, $ANDROID_ADB_SERVER_PORT, and the
        `adb_servers` of its devices.yaml) and boards: the same rule `edgefarm devices` uses on one
        controller. The host itself is not a farm device: with no phone, its list is empty."""
        path = self._inventory or os.environ.get("EDGEFARM_INVENTORY")
        inv = load_inventory(Path(path) if path else None)
        sel = select_usable(inv, "all")
        usable = [(d, i) for d, i in zip(sel.devices, sel.infos) if not kind_spec(d.kind).shares_host_cpu]
        with self._lock:
            self._devices = {d.name: d for d, _ in usable}
        notes = tuple(n for n in sel.notes if "means this host" not in n)
        stands_in = {str(e["name"]): tuple(str(p) for p in e["fallback_for"]) for e in inv.entries
                     if KINDS.get(e["kind"]).board and not e.get("disabled") and e.get("fallback_for")}  # fmt: skip
        pins = {d.name: Pins(d.backend, d.threads) for d, _ in usable}
        return HostDevices(
            self.host, tuple(i for _, i in usable), tuple(sel.unusable), notes, stands_in, pins
        )

    # -- the model and media, once per host ------------------------------------------------------
    def offer(self, blob: Blob) -> bool:
        """True when the host needs the file's chunks; False when its cache already holds it. A cached
        file is trusted once it has hashed whole to its name in this agent's life (each run has its
        own agent): a damaged copy is removed, fetched again, and said (`finish`'s note)."""
        cache = self.cache
        if cache.holds(blob):
            if blob.sha256 in self._verified or cache.verify(blob):
                self._verified.add(blob.sha256)
                return False
            cache.discard(blob)
            self._damaged[blob.sha256] = (
                f"farm host {self.host}: its cached copy of {blob.name} ({cache.path(blob.sha256)}) did not hash "
                f"to {blob.sha256[:16]}… (changed on disk since it arrived): removed and fetched again"
            )
        self.cache.begin(blob)
        self._taken[blob.sha256] = (0, 0)
        return True

    def take_chunk(self, blob: Blob, index: int, data: bytes) -> int:
        n = self.cache.write_chunk(blob, index, data)
        with self._lock:
            got, chunks = self._taken.get(blob.sha256, (0, 0))
            self._taken[blob.sha256] = (got + n, chunks + 1)
        return n

    def finish(self, blob: Blob) -> Received:
        """Verify and rename a file that was sent; a file already held is reported as 0 bytes."""
        with self._lock:
            taken = self._taken.pop(blob.sha256, None)
        if taken is None:
            return Received(self.host, blob.sha256, 0, 0, already_held=True)
        got, chunks = taken
        self.cache.commit(blob)
        self._verified.add(blob.sha256)  # commit hashed it whole
        return Received(self.host, blob.sha256, got, chunks, already_held=False,
                        note=self._damaged.pop(blob.sha256, ""))  # fmt: skip

    def cached_path(self, blob: Blob) -> str:
        return str(self.cache.path(blob.sha256))

    # -- one device's session, streamed -----------------------------------------------------------
    def run(self, work: DeviceJob, files: Mapping[str, Blob]) -> Iterator[tuple]:
        """Run `work` on this host's device with the cached copies of `files` (controller path ->
        Blob); yields the session's events (remote_session.run_here). A streaming generator in Ray."""
        if work.device not in self._devices:
            self.devices()
        device = self._devices.get(work.device)
        if device is None:
            raise ClusterError(
                f"no device {work.device} on this farm host any more",
                where=f"farm host {self.host}",
                fix="plug it back in (`edgefarm devices --cluster` lists what each host sees)",
            )
        local = {path: self.cache.named(blob, Path(path).name) for path, blob in files.items()}
        stop = self._stops.setdefault(work.device, threading.Event())
        stop.clear()
        scratch = self.cache.root / "runs" / work.opts.run_id / work.device
        yield from run_here(device, localize(work, local), scratch, stop)

    def alive(self, device: str) -> bool:
        """Is the device there and answering (a lost phone polled before its stand-in takes over)?"""
        if device not in self._devices:
            self.devices()
        found = self._devices.get(device)
        return bool(found is not None and found.alive())

    def stop(self, device: str) -> None:
        """Ctrl-C on the controller: the device's session stops its runner and keeps what finished."""
        self._stops.setdefault(device, threading.Event()).set()
