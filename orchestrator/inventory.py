"""devices.yaml (validated with JSON Schema, errors naming the line) and device discovery."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator

from .devices.adb import AdbDevice
from .devices.adb_discovery import devices_from_inventory
from .devices.base import Device
from .devices.local import LocalDevice
from .devices.ssh import SshDevice
from .devices.types import DeviceInfo
from .errors import ConfigError
from .registry import Registry

KINDS = Registry[Callable[[Mapping[str, Any]], Device]]("device kind")
KINDS.add("local", LocalDevice.from_entry)
KINDS.add("adb", AdbDevice.from_entry)
KINDS.add("ssh", SshDevice.from_entry)

_COMMON = {
    "name": {"type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"},
    "backend": {"enum": ["cpu", "gpu", "npu"]},
    "threads": {"type": "integer", "minimum": 1},
    "workdir": {"type": "string", "minLength": 1},
    "fallback_for": {"type": "array", "items": {"type": "string"}},
    "disabled": {"type": "boolean"},
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "adb_servers": {"type": "array", "items": {"type": "string", "pattern": r"^[^\s:]+:\d{1,5}$"}},
        "devices": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "kind"],
                "properties": {"kind": {"enum": ["adb", "ssh", "local"]}},
                "allOf": [
                    {
                        "if": {"properties": {"kind": {"const": "local"}}},
                        "then": {
                            "properties": {**_COMMON, "kind": {}, "python": {"type": "string"}},
                            "additionalProperties": False,
                        },
                    },
                    {
                        "if": {"properties": {"kind": {"const": "adb"}}},
                        "then": {
                            "required": ["serial"],
                            "properties": {
                                **_COMMON,
                                "kind": {},
                                "serial": {"type": "string"},
                                "server": {"type": "string"},
                                "runner": {"type": "string"},
                                "libs": {"type": "array", "items": {"type": "string"}},
                            },
                            "additionalProperties": False,
                        },
                    },
                    {
                        "if": {"properties": {"kind": {"const": "ssh"}}},
                        "then": {
                            "required": ["host"],
                            "properties": {
                                **_COMMON,
                                "kind": {},
                                "host": {"type": "string"},
                                "port": {"type": "integer", "minimum": 1, "maximum": 65535},
                                "user": {"type": "string"},
                                "identity_file": {"type": "string"},
                                "python": {"type": "string"},
                            },
                            "additionalProperties": False,
                        },
                    },
                ],
            },
        },
    },
}


@dataclass(frozen=True)
class Inventory:
    path: Path | None
    adb_servers: tuple[tuple[str, int], ...]
    entries: tuple[Mapping[str, Any], ...]


def _line_of(node: yaml.Node, path: list[Any]) -> int:
    """1-based line of the YAML node at a JSON path (the deepest node that exists)."""
    for key in path:
        if isinstance(node, yaml.MappingNode):
            nxt = next((v for k, v in node.value if k.value == key), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            nxt = node.value[key]
        else:
            nxt = None
        if nxt is None:
            break
        node = nxt
    return node.start_mark.line + 1


def _json_path(path: list[Any]) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(top level)"


def parse_inventory(text: str, where: str) -> Inventory:
    """Parse and validate devices.yaml text; every problem is listed with its line."""
    try:
        node = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        raise ConfigError(
            f"not valid YAML: {getattr(e, 'problem', e)}",
            where=f"{where}{line}",
            fix="fix the YAML syntax (indentation, colons, quotes)",
        ) from None
    if data is None:
        data = {}
    errors = sorted(Draft202012Validator(SCHEMA).iter_errors(data), key=lambda e: list(map(str, e.path)))
    problems = []
    for e in errors:
        if e.validator in ("if", "allOf"):
            continue
        line = _line_of(node, list(e.path)) if node is not None else 1
        problems.append(f"{where}:{line} {_json_path(list(e.path))}: {e.message}")
    names = [d.get("name") for d in (data.get("devices") or []) if isinstance(d, dict)]
    dupes = sorted({n for n in names if n and names.count(n) > 1})
    problems += [f"{where}: device name {n!r} is used twice" for n in dupes]
    if problems:
        raise ConfigError(
            "invalid device inventory:\n  " + "\n  ".join(problems),
            where=where,
            fix="correct the fields above (see devices.yaml in the repo for a commented example)",
        )
    servers = []
    for s in data.get("adb_servers") or []:
        host, _, port = s.rpartition(":")
        servers.append((host, int(port)))
    return Inventory(path=None, adb_servers=tuple(servers), entries=tuple(data.get("devices") or ()))


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
    inv = parse_inventory(path.read_text(encoding="utf-8"), str(path))
    return Inventory(path=path, adb_servers=inv.adb_servers, entries=inv.entries)


# Discovery functions find attached devices (phones on adb servers, ...): each returns the usable
# devices and the DeviceInfo of devices found but unusable (unauthorized, offline: with the fix).
Discovery = Callable[[Inventory], "tuple[list[Device], list[DeviceInfo]]"]
DISCOVERY: list[Discovery] = []
# Phones on the local adb server and every `adb_servers` entry (env read here, at the edge).
DISCOVERY.append(lambda inv: devices_from_inventory(inv.adb_servers, inv.entries, os.environ))


@dataclass(frozen=True)
class Selection:
    devices: tuple[Device, ...]
    unusable: tuple[DeviceInfo, ...]
    notes: tuple[str, ...]


def _declared(inv: Inventory) -> list[Device]:
    """Devices declared in devices.yaml that need no discovery (ssh boards)."""
    return [KINDS.get(e["kind"])(e) for e in inv.entries if e["kind"] == "ssh" and not e.get("disabled")]


def select_devices(inv: Inventory, spec: str) -> Selection:
    """`all` | `local` | `NAME,NAME,...` -> the devices to run on, plus the ones found but unusable."""
    notes: list[str] = []
    local_entries = [e for e in inv.entries if e["kind"] == "local" and not e.get("disabled")]
    local = KINDS.get("local")(local_entries[0]) if local_entries else LocalDevice()
    if spec == "local":
        return Selection((local,), (), ())
    found: list[Device] = []
    unusable: list[DeviceInfo] = []
    for discover in DISCOVERY:
        devs, bad = discover(inv)
        found += devs
        unusable += bad
    found += _declared(inv)
    if spec == "all":
        if not found and not local_entries:
            notes.append("no phone or board found: `all` means this host")
            return Selection((local,), tuple(unusable), tuple(notes))
        chosen = found + ([local] if local_entries else [])
        return Selection(tuple(chosen), tuple(unusable), tuple(notes))
    by_name = {d.name: d for d in found}
    by_name.setdefault(local.name, local)
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
