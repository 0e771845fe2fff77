"""Records that cross the controller <-> farm-host boundary (plain values: Ray pickles them)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..devices.types import DeviceInfo
from ..errors import ConfigError, EdgefarmError

ALIVE_S = 30.0  # a device's alive() through its host's agent (the device's own check takes up to 10 s)
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
    note: str = ""  # the host's cached copy was damaged and fetched again


@dataclass(frozen=True)
class FarmHost:
    """A Ray node that offers a `farmhost:NAME` resource."""

    name: str
    node_id: str
    address: str
    alive: bool


@dataclass(frozen=True)
class Pins:
    """A device's settings from its farm host's devices.yaml (`backend:`, `threads:`, `memory_bandwidth_gbs:`); the
    controller's --backend/--threads win over them, as over one controller's devices.yaml."""

    backend: str = "cpu"
    threads: int | None = None
    memory_bandwidth_gbs: float | None = None  # `edgefarm bench`'s decode bound (decode_bound.py)


@dataclass(frozen=True)
class HostDevices:
    """What one farm host's agent found: usable devices, devices found but unusable, notes."""

    host: str
    infos: tuple[DeviceInfo, ...]
    unusable: tuple[DeviceInfo, ...]
    notes: tuple[str, ...] = ()
    fallback_for: Mapping[str, tuple[str, ...]] = field(
        default_factory=dict
    )  # board -> its devices.yaml's phones
    pins: Mapping[str, Pins] = field(default_factory=dict)  # device -> its devices.yaml's backend/threads


@dataclass(frozen=True)
class RemoteDevice:
    """A device on a farm host, as the controller sees it: not a `Device` (the controller never
    pushes to it or runs on it; its host's agent does), but what the plan reads of one (name, kind,
    its devices.yaml pins) and `alive()`, which fallback.py polls."""

    name: str
    kind: str
    host: str
    backend: str = "cpu"  # its farm host's devices.yaml pins (Pins); --backend/--threads win
    threads: int | None = None
    memory_bandwidth_gbs: float | None = None  # its host's devices.yaml's (bench's decode bound)
    agent: object = field(default=None, compare=False, repr=False)  # its host's agent (a Ray actor handle)
    fallback_for: tuple[str, ...] = ()  # a board: the phones its host's devices.yaml says it stands in for

    def alive(self) -> bool:
        """Its host's agent finds it and it answers (fallback.py polls a lost phone with this); a host
        or agent that does not answer within ALIVE_S counts as not alive."""
        import ray  # only a cluster run makes RemoteDevices

        try:
            return bool(ray.get(self.agent.alive.remote(self.name), timeout=ALIVE_S))
        except ray.exceptions.RayError:
            return False


def name_clashes(hosts: Sequence[HostDevices]) -> dict[str, list[tuple[str, str]]]:
    """Device names that more than one farm host uses: name -> [(host, serial), ...] (pure). Each host
    names its phones on its own (the model's slug, or devices.yaml's `name:`), so two hosts with a
    Pixel 8 each both call it `pixel-8`."""
    seen: dict[str, list[tuple[str, str]]] = {}
    for h in hosts:
        for i in h.infos:
            seen.setdefault(i.name, []).append((h.host, i.serial))
    return {n: v for n, v in seen.items() if len({host for host, _ in v}) > 1}


def clash_text(name: str, where: Sequence[tuple[str, str]]) -> str:
    return f"{name} is the name of a device on farm hosts " + " and ".join(
        f"{host} (serial {serial})" for host, serial in where
    )


def refuse_clashes(hosts: Sequence[HostDevices], names: Iterable[str], where: str) -> None:
    """A run may not use a name that two farm hosts give: it is the device's folder in the run (and
    what `--resume` finds again), so it must name one device. Renaming on the controller (adding the
    host or the serial's tail, as one controller does for two phones of one model) would give a
    name that changes when the other host's phone is unplugged before a `--resume`; a name set in
    the host's devices.yaml does not."""
    clashes = name_clashes(hosts)
    chosen = [n for n in names if n in clashes]
    if chosen:
        host, serial = clashes[chosen[0]][-1]
        raise ConfigError(
            "; ".join(clash_text(n, clashes[n]) for n in chosen)
            + ": a device's name is its folder in the run, so it must name one device",
            where=where,
            fix=f"give each such device its own `name:` in its farm host's devices.yaml ($EDGEFARM_INVENTORY "
            f"there), e.g. for a phone on {host}: `devices: [{{name: {chosen[0]}-{host}, kind: adb, "
            f"serial: '{serial}'}}]`; or leave those names out of the run",
        )


def flat_listing(hosts: list[HostDevices]):
    """Every host's devices as one list (usable, then unusable), each with its host, and the notes."""
    infos = [i for h in hosts for i in h.infos]
    unusable = [i for h in hosts for i in h.unusable]
    host_of = [h.host for h in hosts for _ in h.infos] + [h.host for h in hosts for _ in h.unusable]
    notes = [f"{h.host}: {n}" for h in hosts for n in h.notes]
    notes += [f"{h.host}: no device" for h in hosts if not (h.infos or h.unusable or h.notes)]
    notes += [f"{clash_text(n, w)}: a cluster run refuses it until each has its own name in its host's "
              "devices.yaml" for n, w in name_clashes(hosts).items()]  # fmt: skip
    return infos, unusable, notes, dict(enumerate(host_of))
