"""The device inventory (devices.yaml as read; its parsing and checks are devices_yaml.py), device
discovery and the choice of devices for a run."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .devices.base import Device
from .devices.kinds import KINDS
from .devices.local import LocalDevice
from .devices.types import DeviceInfo, Inventory, clip
from .devices_yaml import parse_inventory
from .errors import ConfigError, EdgefarmError, NeedsSetup

MAX_FILE_BYTES = 4 * 2**20  # devices.yaml read at most (a few kB for a large farm)


def load_inventory(path: Path | None) -> Inventory:
    if path is None:
        return Inventory(path=None, adb_servers=(), entries=())
    path = Path(path)
    if not path.is_file():
        raise ConfigError(
            f"inventory file not found: {path}",
            where=str(path),
            fix="pass --inventory PATH to a devices.yaml, or leave it out to use this host",
        )
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ConfigError(
                f"the inventory is {size} bytes; edgefarm reads at most {MAX_FILE_BYTES}",
                where=str(path),
                fix="pass the devices.yaml itself (a few kB for a large farm)",
            )
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(
            f"cannot read the inventory: {getattr(e, 'strerror', None) or e}",
            where=str(path),
            fix="check the file's permissions and that it is UTF-8 text",
        ) from None
    inv = parse_inventory(text, str(path))
    return Inventory(path=path, adb_servers=inv.adb_servers, entries=inv.entries, cluster=inv.cluster)


@dataclass(frozen=True)
class Selection:
    devices: tuple[Device, ...]
    unusable: tuple[DeviceInfo, ...]
    notes: tuple[str, ...]
    infos: tuple[DeviceInfo, ...] = ()  # after select_usable: each device's info, in `devices` order


def _declared(inv: Inventory) -> list[Device]:
    """Devices declared in devices.yaml that need no discovery (boards)."""
    return [
        KINDS.get(e["kind"]).make(e)
        for e in inv.entries
        if KINDS.get(e["kind"]).board and not e.get("disabled")
    ]


def _hosts(inv: Inventory) -> tuple[list[Mapping[str, Any]], list[Device]]:
    """The `kind: local` entries, and this host's devices: one per entry, else the default one.
    Several `kind: local` entries are several devices on this host (other work folders, pythons,
    threads); `local` means the first of them."""
    entries = [e for e in inv.entries if KINDS.get(e["kind"]).shares_host_cpu and not e.get("disabled")]
    return entries, [KINDS.get(e["kind"]).make(e) for e in entries] or [LocalDevice()]


def select_devices(inv: Inventory, spec: str) -> Selection:
    """`all` | `local` | `NAME,NAME,...` -> the devices to run on, plus the ones found but unusable."""
    notes: list[str] = []
    local_entries, hosts = _hosts(inv)
    local = hosts[0]
    if spec == "local":
        return Selection((local,), (), ())
    found: list[Device] = []
    unusable: list[DeviceInfo] = []
    for kind in (KINDS.get(n) for n in KINDS):  # each kind's discovery (devices/kinds.py); env read here
        if kind.discover is not None:
            devs, bad = kind.discover(inv, os.environ)
            found += devs
            unusable += bad
    found += _declared(inv)
    if spec == "all":
        if not found and not local_entries:
            notes.append("no phone or board found: `all` means this host")
            return Selection((local,), tuple(unusable), tuple(notes))
        chosen = found + (hosts if local_entries else [])
        return Selection(tuple(chosen), tuple(unusable), tuple(notes))
    by_name = {d.name: d for d in found}
    for host in hosts:
        by_name.setdefault(host.name, host)
    by_name.setdefault("local", local)
    chosen, missing = [], []
    for name in [n.strip() for n in spec.split(",") if n.strip()]:
        if name in by_name:
            if by_name[name] not in chosen:
                chosen.append(by_name[name])
        else:
            bad = next((u for u in unusable if u.name == name), None)
            missing.append(f"{name} ({bad.state}: {bad.problem})" if bad else name)
    if missing:
        raise ConfigError(
            f"unknown or unusable device(s): {', '.join(missing)}",
            where="--devices",
            fix=f"use `all`, `local` or names from `edgefarm devices`: {', '.join(sorted(by_name))}",
        )
    return Selection(tuple(chosen), tuple(unusable), tuple(notes))


def select_usable(inv: Inventory, spec: str) -> Selection:
    """select_devices, and for `all` only the devices that answer: THE rule of what `all` uses.

    Each device found for `all` is asked for its info (in parallel); one that fails (a board that is
    down, a board without litert_lm, a phone that stopped answering) moves to `unusable` with the
    error's fix, so `edgefarm devices` and `edgefarm run --devices all` always agree. Devices named
    on purpose are not probed: they run, and a failure is that device's outcome (exit 3).
    """
    sel = select_devices(inv, spec)
    if spec != "all":
        return sel
    infos = probe_all(sel.devices)
    usable = [(d, i) for d, i in zip(sel.devices, infos) if i.state == "device"]
    unusable = sel.unusable + tuple(i for i in infos if i.state != "device")
    notes = sel.notes
    if not usable:  # as with nothing found: `all` means this host
        local = LocalDevice()
        notes += ("no usable phone or board: `all` means this host",)
        return Selection((local,), unusable, notes, (local.info(),))
    return Selection(tuple(d for d, _ in usable), unusable, notes, tuple(i for _, i in usable))


def probe_info(device: Device) -> DeviceInfo:
    """The device's info; one that fails (a board that is down, a board without litert_lm, a phone that
    stopped answering) is a DeviceInfo whose state and problem say so, with the error's fix."""
    try:
        return device.info()
    except EdgefarmError as e:
        problem = clip(f"{e.what}; fix: {e.fix}", 1000)
        if isinstance(e, NeedsSetup) and e.info is not None:  # a board that answers: its facts
            return e.info
        return DeviceInfo(name=device.name, kind=device.kind, state="unreachable", problem=problem)


def probe_all(devices: Sequence[Device]) -> list[DeviceInfo]:
    """probe_info of every device, asked in parallel, in the devices' order."""
    if not devices:
        return []
    with ThreadPoolExecutor(max_workers=min(16, len(devices)), thread_name_prefix="probe") as pool:
        return list(pool.map(probe_info, devices))
