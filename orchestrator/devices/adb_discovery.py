"""Finding phones: every adb server (the local one and each farm host in devices.yaml), merged.

Each phone is owned by the first server that lists it; unauthorized/offline phones and dead servers
are reported with the fix, never dropped. A phone without a devices.yaml entry is named as people know
it (`known_name`: its marketing name, else manufacturer + model), unique among the phones found.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ..errors import DeviceError
from .adb import FIX_OFFLINE, FIX_UNAUTHORIZED, AdbDevice, fix_server, server_up
from .types import DeviceInfo, slug


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
        import adbutils  # only for a server that answers: a host without one never imports it (~0.2 s)

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


NAME_PROPS = (
    "ro.product.marketname",
    "ro.product.vendor.marketname",
    "ro.product.manufacturer",
    "ro.product.model",
)
NAME_CALL_S = 10.0  # one info() call per phone without a devices.yaml name, all phones at once


def known_name(props: Mapping[str, str], fallback: str = "") -> str:
    """The name people know a phone by: its marketing name (`ro.product.marketname`, then
    `ro.product.vendor.marketname`), else manufacturer + model ("google-pixel-8"; a model that already
    starts with its maker's name is not doubled), else `fallback` (the adb listing's model), slugged."""
    for key in NAME_PROPS[:2]:
        if slug(props.get(key, "")):
            return slug(props[key])
    maker, model = slug(props.get("ro.product.manufacturer", "")), slug(props.get("ro.product.model", ""))
    if model:
        return model if not maker or model == maker or model.startswith(maker + "-") else f"{maker}-{model}"
    return slug(fallback) or "phone"


def unique_names(bases: Mapping[str, str], taken: set[str]) -> dict[str, str]:
    """serial -> a name no other phone has: a base shared by several phones (or taken by a devices.yaml
    name) gets each phone's serial tail on ALL of them, so no phone's name depends on which one the
    server happened to list first."""
    count: dict[str, int] = {}
    for base in bases.values():
        count[base] = count.get(base, 0) + 1
    names = {}
    for serial, base in bases.items():
        if count[base] == 1 and base not in taken:
            names[serial] = base
        else:
            tail = slug(serial)[-8:].strip("-")
            names[serial] = f"{base}-{tail}"
    return names


def read_unnamed(phones: Sequence[AdbPhone]) -> dict[str, AdbDevice]:
    """serial -> the phone as a device named by its serial whose info() has been read (one call per
    phone, in parallel, each under NAME_CALL_S): its properties (`props`) name it, and `named` keeps the
    reply for the run. A phone that does not answer is absent and is named from the adb listing."""

    def ask(phone: AdbPhone) -> AdbDevice | None:
        dev = AdbDevice(phone.serial, phone.serial, server=phone.server, call_timeout_s=NAME_CALL_S)
        try:
            dev.info()
        except DeviceError:
            return None
        return dev if dev.props else None

    if not phones:
        return {}
    with ThreadPoolExecutor(max_workers=min(16, len(phones)), thread_name_prefix="name") as pool:
        answers = list(pool.map(ask, phones))
    return {p.serial: a for p, a in zip(phones, answers) if a is not None}


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
    unnamed = [p for p in phones if p.serial not in pinned]
    read = read_unnamed([p for p in unnamed if p.state == "device"])  # unauthorized: the listing's model
    named = unique_names({p.serial: known_name(read[p.serial].props if p.serial in read else {}, p.model or p.product)
                          for p in unnamed},
                         {str(e["name"]) for e in pinned.values()})  # fmt: skip
    for phone in phones:
        entry = pinned.get(phone.serial)
        name = str(entry["name"]) if entry else named[phone.serial]
        if phone.state != "device":
            unusable.append(DeviceInfo(name=name, kind="adb", serial=phone.serial, model=phone.model,
                                       state=phone.state, problem=phone.problem,
                                       extra={"server": f"{phone.server[0]}:{phone.server[1]}"}))  # fmt: skip
            continue
        if entry:
            dev = AdbDevice.from_entry(entry, server=phone.server)
        elif phone.serial in read:
            dev = read[phone.serial].named(name)
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
