"""Finding phones: every adb server (the local one and each farm host in devices.yaml), merged.

Each phone is owned by the first server that lists it; unauthorized/offline phones and dead servers
are reported with the fix, never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import adbutils

from .adb import FIX_OFFLINE, FIX_UNAUTHORIZED, AdbDevice, fix_server, server_up
from .types import DeviceInfo


@dataclass(frozen=True)
class AdbPhone:
    """One phone as an adb server lists it."""

    serial: str
    state: str  # device | unauthorized | offline | ...
    server: tuple[str, int]
    model: str = ""
    product: str = ""
    transport_id: int | None = None

    @property
    def problem(self) -> str:
        if self.state == "device":
            return ""
        if self.state == "unauthorized":
            return f"phone is unauthorized: {FIX_UNAUTHORIZED}"
        if self.state == "offline":
            return f"phone is offline: {FIX_OFFLINE}"
        return f"phone is in state {self.state!r}: {FIX_OFFLINE}"


def discover_adb(servers: Sequence[tuple[str, int]]) -> tuple[list[AdbPhone], list[str]]:
    """Every phone on every adb server, each owned by the first server that lists it.

    Returns (phones, notes); unauthorized/offline phones are listed, never dropped. A server that
    does not answer becomes a note, so one dead farm host does not hide the others' phones.
    """
    phones: list[AdbPhone] = []
    notes: list[str] = []
    seen: set[str] = set()
    for host, port in dict.fromkeys(servers):
        if not server_up(host, port):
            notes.append(
                f"adb server {host}:{port} does not answer; fix: {fix_server(host, port, resume=False)}"
            )
            continue
        try:
            infos = adbutils.AdbClient(host, port, socket_timeout=10).list(extended=True)
        except (adbutils.AdbError, OSError) as e:
            notes.append(f"adb server {host}:{port} failed to list devices: {e}")
            continue
        for d in infos:
            if d.serial in seen:
                continue
            seen.add(d.serial)
            phones.append(
                AdbPhone(
                    serial=d.serial,
                    state=d.state,
                    server=(host, port),
                    model=d.tags.get("model", "").replace("_", " "),
                    product=d.tags.get("product", ""),
                    transport_id=d.transport_id,
                )
            )
    return phones, notes


def phone_name(phone: AdbPhone, taken: set[str]) -> str:
    """A stable, readable device name: the model slug, plus the serial's tail when two clash."""
    base = re.sub(r"[^a-z0-9]+", "-", (phone.model or phone.product or "phone").lower()).strip("-")
    base = base or "phone"
    if base not in taken:
        return base
    tail = re.sub(r"[^A-Za-z0-9]+", "-", phone.serial).strip("-")[-8:]
    return f"{base}-{tail}"


def local_server(env: Mapping[str, str]) -> tuple[str, int]:
    """The adb server this host's `adb` uses (ANDROID_ADB_SERVER_HOST/PORT, else 127.0.0.1:5037)."""
    return env.get("ANDROID_ADB_SERVER_HOST", "127.0.0.1"), int(env.get("ANDROID_ADB_SERVER_PORT", "5037"))


def devices_from_inventory(
    adb_servers: Sequence[tuple[str, int]], entries: Sequence[Mapping[str, Any]], env: Mapping[str, str]
) -> tuple[list[AdbDevice], list[DeviceInfo]]:
    """Every phone on the local and listed servers as an AdbDevice (pinned settings from devices.yaml
    matched by serial); unauthorized/offline phones and dead servers as DeviceInfo with the fix."""
    local = local_server(env)
    servers = [local, *[s for s in adb_servers if s != local]]
    phones, notes = discover_adb(servers)
    pinned = {e["serial"]: e for e in entries if e.get("kind") == "adb" and not e.get("disabled")}
    devices: list[AdbDevice] = []
    unusable: list[DeviceInfo] = []
    taken = {str(e["name"]) for e in pinned.values()}
    for phone in phones:
        entry = pinned.get(phone.serial)
        name = str(entry["name"]) if entry else phone_name(phone, taken)
        taken.add(name)
        if phone.state != "device":
            unusable.append(DeviceInfo(name=name, kind="adb", serial=phone.serial, model=phone.model,
                                       state=phone.state, problem=phone.problem,
                                       extra={"server": f"{phone.server[0]}:{phone.server[1]}"}))  # fmt: skip
            continue
        if entry:
            dev = AdbDevice.from_entry(entry, server=phone.server)
        else:
            dev = AdbDevice(name, phone.serial, server=phone.server)
        devices.append(dev)
    found = {p.serial for p in phones}
    for serial, entry in pinned.items():
        if serial not in found:
            unusable.append(DeviceInfo(name=str(entry["name"]), kind="adb", serial=serial, state="absent",
                                       problem=f"not attached to any adb server; fix: {FIX_OFFLINE}"))  # fmt: skip
    for i, note in enumerate(notes):
        host_port = note.split()[2] if note.startswith("adb server ") else f"server-{i}"
        if host_port == f"{local[0]}:{local[1]}" and local not in adb_servers:
            continue  # no local adb server (and not listed): this host simply has no phones
        unusable.append(DeviceInfo(name=f"adb-server-{host_port}", kind="adb", serial=host_port,
                                   state="unreachable", problem=note))  # fmt: skip
    return devices, unusable
