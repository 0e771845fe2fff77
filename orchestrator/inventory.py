"""devices.yaml (validated with JSON Schema, errors naming the line) and device discovery."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .devices.base import Device
from .devices.local import LocalDevice
from .devices.types import DeviceInfo
from .errors import ConfigError, EdgefarmError, NeedsSetup
from .registry import Registry

KINDS = Registry[Callable[[Mapping[str, Any]], Device]]("device kind")


def _adb_entry(entry: Mapping[str, Any]) -> Device:
    from .devices.adb import AdbDevice  # adbutils is imported only when a phone is in play

    return AdbDevice.from_entry(entry)


def _ssh_entry(entry: Mapping[str, Any]) -> Device:
    from .devices.ssh import SshDevice  # asyncssh likewise, only when a board is

    return SshDevice.from_entry(entry)


KINDS.add("local", LocalDevice.from_entry)
KINDS.add("adb", _adb_entry)
KINDS.add("ssh", _ssh_entry)

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
                                "runner": {"enum": ["native", "upstream"]},
                                "runner_path": {"type": "string"},
                                "native_runner": {"type": "string"},
                                "runtime_lib": {"type": "string"},
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
                                "known_hosts": {"type": "string"},
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


# devices.yaml bounds: a real inventory is a few hundred nodes; YAML aliases are welcome (shared
# settings) but a "billion laughs" alias bomb expands to millions of nodes, so expansion is counted.
MAX_FILE_BYTES = 4 * 2**20
MAX_DEPTH = 32
MAX_EXPANDED_NODES = 20_000  # nodes the aliases of one file may add, in total
MAX_MESSAGE_CHARS = 300  # one problem line; values in messages are cut, never printed whole


class _Refused(yaml.YAMLError):
    def __init__(self, problem: str, line: int) -> None:
        super().__init__(problem)
        self.problem, self.line = problem, line


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that refuses deep nesting, recursive aliases and aliases expanding past a bound."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._sizes: dict[int, int] = {}
        self._expanded = 0

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node:
        event = self.peek_event()
        line = event.start_mark.line + 1
        if isinstance(event, yaml.AliasEvent):
            target = self.anchors.get(event.anchor)
            if target is not None:
                if target.end_mark is None:  # still being composed: the alias is inside its own anchor
                    raise _Refused(
                        f"alias *{event.anchor} refers to its own anchor (a recursive value)", line
                    )
                self._expanded += self._size(target)
                if self._expanded > MAX_EXPANDED_NODES:
                    raise _Refused(
                        f"YAML aliases here expand to more than {MAX_EXPANDED_NODES} values "
                        "(an alias bomb?); write the values out, or share fewer of them",
                        line,
                    )
            return super().compose_node(parent, index)
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise _Refused(f"nested deeper than {MAX_DEPTH} levels", line)
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def _size(self, node: yaml.Node) -> int:
        """Values in `node` once every alias in it is expanded (memoised per node: no blow-up here)."""
        known = self._sizes.get(id(node))
        if known is not None:
            return known
        if isinstance(node, yaml.SequenceNode):
            n = 1 + sum(self._size(c) for c in node.value)
        elif isinstance(node, yaml.MappingNode):
            n = 1 + sum(self._size(k) + self._size(v) for k, v in node.value)
        else:
            n = 1
        self._sizes[id(node)] = n
        return n


def _clip(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    if len(text) <= limit:
        return text
    tail = f"... ({len(text)} chars)"
    return text[: limit - len(tail)] + tail


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
    loader = _BoundedLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except _Refused as e:
        raise ConfigError(
            _clip(e.problem),
            where=f"{where}:{e.line}",
            fix="simplify the YAML there (devices.yaml needs no deep nesting and no big shared values)",
        ) from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        raise ConfigError(
            _clip(f"not valid YAML: {getattr(e, 'problem', None) or e}"),
            where=f"{where}{line}",
            fix="fix the YAML syntax (indentation, colons, quotes)",
        ) from None
    finally:
        loader.dispose()
    if data is None:
        data = {}
    problems = _schema_problems(data, node, where)
    devices = data.get("devices") if isinstance(data, dict) else None
    names = [d.get("name") for d in (devices if isinstance(devices, list) else []) if isinstance(d, dict)]
    dupes = sorted({n for n in names if isinstance(n, str) and n and names.count(n) > 1})
    problems += [f"{where}: device name {n!r} is used twice" for n in dupes]
    if problems:
        more = f"\n  ... and {len(problems) - 30} more" if len(problems) > 30 else ""
        raise ConfigError(
            "invalid device inventory:\n  " + "\n  ".join(problems[:30]) + more,
            where=where,
            fix="correct the fields above (see devices.yaml in the repo for a commented example)",
        )
    servers = []
    for s in data.get("adb_servers") or []:
        host, _, port = s.rpartition(":")
        servers.append((host, int(port)))
    return Inventory(path=None, adb_servers=tuple(servers), entries=tuple(data.get("devices") or ()))


def _schema_problems(data: Any, node: Any, where: str) -> list[str]:
    """What the inventory schema says of `data`, with the YAML line of each problem. Content that
    passed before (same data, same schema and code) is not checked again (memo.py): jsonschema's
    import alone is 46 ms of a run's start."""
    from .memo import Memo, code_signature

    memo = Memo("inventories")
    text = json.dumps(data, sort_keys=True, default=str)
    key = {"sha256": hashlib.sha256(text.encode()).hexdigest(), "code": code_signature("inventory.py")}
    if memo.get(key) is True:
        return []
    from jsonschema import Draft202012Validator

    errors = sorted(Draft202012Validator(SCHEMA).iter_errors(data), key=lambda e: list(map(str, e.path)))
    problems = []
    for e in errors:
        if e.validator in ("if", "allOf"):
            continue
        line = _line_of(node, list(e.path)) if node is not None else 1
        problems.append(_clip(f"{where}:{line} {_json_path(list(e.path))}: {e.message}"))
    if not problems:
        memo.put(key, [], True)
    return problems


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
    return Inventory(path=path, adb_servers=inv.adb_servers, entries=inv.entries)


# Discovery functions find attached devices (phones on adb servers, ...): each returns the usable
# devices and the DeviceInfo of devices found but unusable (unauthorized, offline: with the fix).
Discovery = Callable[[Inventory], "tuple[list[Device], list[DeviceInfo]]"]
DISCOVERY: list[Discovery] = []


# Phones on the local adb server and every `adb_servers` entry (env read here, at the edge).
def _discover_phones(inv: Inventory) -> tuple[list[Device], list[DeviceInfo]]:
    from .devices.adb_discovery import devices_from_inventory

    return devices_from_inventory(inv.adb_servers, inv.entries, os.environ)


DISCOVERY.append(_discover_phones)


@dataclass(frozen=True)
class Selection:
    devices: tuple[Device, ...]
    unusable: tuple[DeviceInfo, ...]
    notes: tuple[str, ...]
    infos: tuple[DeviceInfo, ...] = ()  # after select_usable: each device's info, in `devices` order


def _declared(inv: Inventory) -> list[Device]:
    """Devices declared in devices.yaml that need no discovery (ssh boards)."""
    return [KINDS.get(e["kind"])(e) for e in inv.entries if e["kind"] == "ssh" and not e.get("disabled")]


def _hosts(inv: Inventory) -> tuple[list[Mapping[str, Any]], list[Device]]:
    """The `kind: local` entries, and this host's devices: one per entry, else the default one.
    Several `kind: local` entries are several devices on this host (other work folders, pythons,
    threads); `local` means the first of them."""
    entries = [e for e in inv.entries if e["kind"] == "local" and not e.get("disabled")]
    return entries, [KINDS.get("local")(e) for e in entries] or [LocalDevice()]


def hosts_chosen(inv: Inventory, spec: str) -> list[Device]:
    """This host's devices that `spec` selects for certain, known without discovering phones or
    probing boards (their runners can start before the rest of the run is prepared): `local`, this
    host's names, and `all` when devices.yaml declares this host. (`all` without such an entry uses
    this host only when nothing else is found; a phone named like a host entry takes the name.)"""
    entries, hosts = _hosts(inv)
    if spec == "all":
        return hosts if entries else []
    names = [n.strip() for n in spec.split(",") if n.strip()]
    chosen = [h for h in hosts if h.name in names]
    if "local" in names and hosts[0] not in chosen:
        chosen.insert(0, hosts[0])
    return chosen


def select_devices(inv: Inventory, spec: str) -> Selection:
    """`all` | `local` | `NAME,NAME,...` -> the devices to run on, plus the ones found but unusable."""
    notes: list[str] = []
    local_entries, hosts = _hosts(inv)
    local = hosts[0]
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
    with ThreadPoolExecutor(
        max_workers=max(1, min(16, len(sel.devices))), thread_name_prefix="probe"
    ) as pool:
        answers = list(pool.map(_probe, sel.devices))
    usable = [(d, a) for d, a in zip(sel.devices, answers) if isinstance(a, DeviceInfo)]
    down = [a for a in answers if isinstance(a, _Down)]
    unusable = sel.unusable + tuple(
        x.info or DeviceInfo(name=x.device.name, kind=x.device.kind, state="unreachable", problem=x.problem)
        for x in down
    )
    notes = sel.notes
    if not usable:  # as with nothing found: `all` means this host
        local = LocalDevice()
        notes += ("no usable phone or board: `all` means this host",)
        return Selection((local,), unusable, notes, (local.info(),))
    return Selection(tuple(d for d, _ in usable), unusable, notes, tuple(a for _, a in usable))


@dataclass(frozen=True)
class _Down:
    device: Device
    problem: str
    info: DeviceInfo | None = None  # a board that answers but needs `edgefarm setup`: its facts


def _probe(device: Device) -> DeviceInfo | _Down:
    try:
        return device.info()
    except EdgefarmError as e:
        facts = e.info if isinstance(e, NeedsSetup) else None
        return _Down(device, _clip(f"{e.what}; fix: {e.fix}", 1000), facts)
