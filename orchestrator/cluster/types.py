"""Records that cross the controller <-> farm-host boundary (plain values: Ray pickles them)."""

from __future__ import annotations

from dataclasses import dataclass

from ..devices.types import DeviceInfo
from ..errors import EdgefarmError

FARMHOST_PREFIX = "farmhost:"  # a farm host is a Ray node started with resources {"farmhost:NAME": 1}
CHUNK_BYTES = 8 * 1024 * 1024  # one object-store object per chunk
WINDOW_CHUNKS = 4  # chunks in flight per transfer: bounds the controller's and the object store's memory


class ClusterError(EdgefarmError):
    """The cluster cannot be reached, has no farm host, or lost one."""

    exit_code = 3


class TransferRefused(ClusterError):
    """A chunk or a whole file whose sha256 is not the one the controller announced."""


@dataclass(frozen=True)
class Blob:
    """A file as the controller announces it: its content hash, size and one sha256 per chunk."""

    name: str  # the file's name on the controller, for messages only (the cache keys by sha256)
    sha256: str
    size: int
    chunk_bytes: int
    chunk_sha256: tuple[str, ...]

    @property
    def chunks(self) -> int:
        return len(self.chunk_sha256)


@dataclass(frozen=True)
class Received:
    """What one farm host took in for one blob: 0 bytes when its cache already held it."""

    host: str
    sha256: str
    bytes_received: int
    chunks_received: int
    already_held: bool


@dataclass(frozen=True)
class FarmHost:
    """A Ray node that offers a `farmhost:NAME` resource."""

    name: str
    node_id: str
    address: str
    alive: bool


@dataclass(frozen=True)
class HostDevices:
    """What one farm host's agent found: usable devices, devices found but unusable, notes."""

    host: str
    infos: tuple[DeviceInfo, ...]
    unusable: tuple[DeviceInfo, ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class RemoteDevice:
    """A device on a farm host, as the controller sees it (its session runs on the host)."""

    name: str
    kind: str
    host: str
    backend: str | None = None  # --backend/--threads apply; a farm host's devices.yaml pins are not read yet
    threads: int | None = None


def flat_listing(hosts: list[HostDevices]):
    """Every host's devices as one list (usable, then unusable), each with its host, and the notes."""
    infos = [i for h in hosts for i in h.infos]
    unusable = [i for h in hosts for i in h.unusable]
    host_of = [h.host for h in hosts for _ in h.infos] + [h.host for h in hosts for _ in h.unusable]
    notes = [f"{h.host}: {n}" for h in hosts for n in h.notes]
    notes += [f"{h.host}: no device" for h in hosts if not (h.infos or h.unusable or h.notes)]
    return infos, unusable, notes, dict(enumerate(host_of))
