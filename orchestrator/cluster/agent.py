"""The agent on a farm host: one long-lived Ray actor per host, pinned by its `farmhost:NAME`
resource. A plain class here (Ray wraps it in `connect.start_agents`), so it is tested without Ray."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from ..decode_bound import bandwidths
from ..devices.kinds import KINDS, kind_spec
from ..devices.types import DeviceInfo
from ..farm.session import DeviceJob
from ..fsutil import cache_dir
from ..inventory import load_inventory, select_usable
from ..runners.base import Need
from ..runners.readiness import Readiness, assess, unreachable
from .hostcache import CACHE_IN_CACHE_DIR, HostCache
from .remote_session import localize, run_here
from .types import Blob, ClusterError, HostDevices, Pins, Received

# The agent's lease (docs/cluster.md, "The agents end with their run"): its controller renews it every
# RENEW_S (connect.Lease); an agent not renewed for LEASE_S (its controller killed, or unreachable) stops
# its sessions (each stops its runner and keeps what finished), waits for them at most STOP_GRACE_S, and
# ends its process. Ray ends a dead controller's agents only through the head: with the head gone, the
# agents lived on until their raylets gave up on it (Ray's 60 s GCS timeout).
RENEW_S = 1.0
LEASE_S = 10.0  # 10 renewals missed: a loaded 2-core controller is never that late
STOP_GRACE_S = 5.0
LEASE_POLL_S = 0.5


class FarmHostAgent:
    def __init__(
        self,
        host: str,
        cache_root: Path | None = None,
        inventory: Path | None = None,
        *,
        lease_s: float | None = None,
        end=os._exit,
    ) -> None:
        self.host = host
        self._cache_root = cache_root
        self._inventory = inventory
        self._taken: dict[str, tuple[int, int]] = {}  # sha256 -> (bytes, chunks) received this life
        self._lock = threading.Lock()  # the actor is threaded: transfers and sessions run side by side
        self._devices: dict[str, object] = {}  # name -> Device, from the last listing
        self._stops: dict[str, threading.Event] = {}
        self._verified: set[str] = set()  # sha256 of cached files hashed whole in this agent's life (run)
        self._damaged: dict[str, str] = {}  # sha256 -> the note that its cached copy was fetched again
        self._renewed = time.monotonic()
        self._leave = threading.Event()
        self._sessions = 0  # running now (`run`)
        if lease_s is not None:  # an agent Ray runs for a controller (connect.create_agents)
            threading.Thread(target=self._hold, args=(lease_s, end), name="lease", daemon=True).start()

    # -- the lease: the agent ends with its run ----------------------------------------------------
    def renew(self) -> None:
        """The controller is there (every RENEW_S)."""
        self._renewed = time.monotonic()

    def leave(self) -> None:
        """The run is over and its head gone (Ray cannot end this process): end now."""
        self._leave.set()

    def _hold(self, lease_s: float, end) -> None:
        while not self._leave.wait(LEASE_POLL_S):
            if time.monotonic() - self._renewed > lease_s:
                break
        for stop in list(self._stops.values()):
            stop.set()  # each session stops its runner and keeps what finished
        deadline = time.monotonic() + STOP_GRACE_S
        while self._sessions and time.monotonic() < deadline:
            time.sleep(0.1)
        end(0)

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
        bandwidth = bandwidths(inv.entries, {d.name for d, _ in usable})
        pins = {d.name: Pins(d.backend, d.threads, bandwidth.get(d.name)) for d, _ in usable}
        return HostDevices(
            self.host, tuple(i for _, i in usable), tuple(sel.unusable), notes, stands_in, pins
        )

    def readiness(self, infos: Sequence[DeviceInfo], need: Need) -> list[Readiness]:
        """Each listed device's checks for a run that puts `need` on it, made on this host (the runner,
        its runtime library and the device's storage are this host's): `edgefarm doctor --cluster`
        and run's refusal of a device that cannot run, as on one controller (runners/readiness.py)."""
        if any(i.name not in self._devices for i in infos):
            self.devices()
        found = [(self._devices.get(i.name), i) for i in infos]
        return [assess(d, i, need, os.environ) if d is not None and i.state == "device" else unreachable(i)
                for d, i in found]  # fmt: skip

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
        with self._lock:
            self._sessions += 1
        try:
            yield from run_here(device, localize(work, local), scratch, stop)
        finally:
            with self._lock:
                self._sessions -= 1

    def alive(self, device: str) -> bool:
        """Is the device there and answering (a lost phone polled before its stand-in takes over)?"""
        if device not in self._devices:
            self.devices()
        found = self._devices.get(device)
        return bool(found is not None and found.alive())

    def stop(self, device: str) -> None:
        """Ctrl-C on the controller: the device's session stops its runner and keeps what finished."""
        self._stops.setdefault(device, threading.Event()).set()
