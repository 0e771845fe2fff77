"""Records shared by every device kind."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LineSink = Callable[[str], None]  # receives one line of a command's output (no newline)
ProgressSink = Callable[[str, int, int], None]  # push progress: (remote path, bytes sent so far, file size)


@dataclass(frozen=True)
class DeviceInfo:
    """What a device is. Fields a transport cannot know stay None/empty."""

    name: str
    kind: str  # adb | ssh | local
    serial: str = ""  # adb serial, ssh host, or hostname
    model: str = ""
    manufacturer: str = ""
    soc: str = ""
    abi: str = ""
    abis: tuple[str, ...] = ()  # every ABI the device runs binaries of (a phone's ro.product.cpu.abilist)
    os: str = ""  # "Android 14 (SDK 34)", "Debian 12", ...
    build: str = ""  # the OS build: a phone's ro.build.fingerprint (else ro.build.display.id), this host's kernel
    cpu: str = ""
    cores: int | None = None
    ram_mb: float | None = None
    free_storage_mb: float | None = None
    state: str = "device"  # device | unauthorized | offline | unreachable
    problem: str = ""  # why the device cannot be used, with the fix
    extra: Mapping[str, Any] = field(default_factory=dict)  # battery, thermal, server, ...

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DeviceInfo:
        """device.json (dataclasses.asdict of the record) read back: `edgefarm report`, and devices whose
        folder a step after the farm rewrote. A missing or mistyped field takes its default."""
        text = {f: str(data[f]) for f in _TEXT_FIELDS if isinstance(data.get(f), (str, int, float))}
        cores, ram, free = data.get("cores"), data.get("ram_mb"), data.get("free_storage_mb")
        abis = data.get("abis")
        return cls(
            **{"name": "", "kind": "", **text},
            abis=tuple(str(a) for a in abis) if isinstance(abis, list) else (),
            cores=cores if isinstance(cores, int) and not isinstance(cores, bool) else None,
            ram_mb=ram if isinstance(ram, (int, float)) and not isinstance(ram, bool) else None,
            free_storage_mb=free if isinstance(free, (int, float)) and not isinstance(free, bool) else None,
            extra=data["extra"] if isinstance(data.get("extra"), Mapping) else {},
        )


_TEXT_FIELDS = (
    "name",
    "kind",
    "serial",
    "model",
    "manufacturer",
    "soc",
    "abi",
    "os",
    "build",
    "cpu",
    "state",
    "problem",
)


@dataclass(frozen=True)
class PushStats:
    files: int = 0
    bytes_sent: int = 0
    files_skipped: int = 0  # content hash already matched on the device
    bytes_skipped: int = 0

    def __add__(self, other: PushStats) -> PushStats:
        return PushStats(
            self.files + other.files,
            self.bytes_sent + other.bytes_sent,
            self.files_skipped + other.files_skipped,
            self.bytes_skipped + other.bytes_skipped,
        )


@dataclass(frozen=True)
class Exit:
    """How a device command ended."""

    code: int | None  # None when killed by a signal or by our timeout
    signal: int | None = None
    timed_out: bool = False
    output_tail: str = ""  # last lines of stderr/merged output, for error messages
    cancelled: bool = False  # the caller's cancel event ended it (Ctrl-C)


@dataclass(frozen=True)
class Inventory:
    """devices.yaml as read (devices_yaml.py parses and checks it); no file: attached phones + this host."""

    path: Path | None
    adb_servers: tuple[tuple[str, int], ...]
    entries: tuple[Mapping[str, Any], ...]
    cluster: str | None = None  # `cluster: HOST:PORT`: run on that Ray cluster's farm hosts (docs/cluster.md)


def slug(text: str) -> str:
    """Lower-case letters and digits joined by single dashes ("Galaxy S24 Ultra" -> galaxy-s24-ultra)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


MAX_MESSAGE_CHARS = 300  # one problem line; values in messages are cut, never printed whole


def clip(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """`text` cut to `limit` characters, saying how long it was."""
    if len(text) <= limit:
        return text
    tail = f"... ({len(text)} chars)"
    return text[: limit - len(tail)] + tail
