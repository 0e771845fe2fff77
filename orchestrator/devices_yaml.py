"""devices.yaml, parsed and checked: bounded YAML (no alias bombs, no deep nesting) and the JSON Schema
of its entries, every problem with its line."""

from __future__ import annotations

import ipaddress
import posixpath
import re
from typing import Any

import yaml

from android_runner.backend import BACKENDS

from .devices.kinds import KINDS
from .devices.types import Inventory, clip
from .errors import ConfigError

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"  # a device's name: the schema's, and name_problem's
_NAME = re.compile(NAME_PATTERN.replace("$", r"\Z"))
_COMMON = {
    "name": {"type": "string", "pattern": NAME_PATTERN},
    "backend": {"enum": list(BACKENDS)},
    "threads": {"type": "integer", "minimum": 1},
    "workdir": {"type": "string", "minLength": 1},
    "fallback_for": {"type": "array", "items": {"type": "string"}},
    "disabled": {"type": "boolean"},
    # the device's memory bandwidth (GB/s, from its SoC's documentation): `edgefarm bench` shows decode
    # as a share of the bound it sets (docs/bench.md); absent, nothing is guessed
    "memory_bandwidth_gbs": {"type": "number", "exclusiveMinimum": 0, "maximum": 10000},
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "adb_servers": {"type": "array", "items": {"type": "string", "pattern": r"^[^\s:]+:\d{1,5}$"}},
        "cluster": {"type": "string", "pattern": r"^[^\s:]+:\d{1,5}$"},  # a Ray head (docs/cluster.md)
        "devices": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "kind"],
                "properties": {"kind": {"enum": list(KINDS)}},  # devices/kinds.py, the one table
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
MAX_DEPTH = 32
MAX_EXPANDED_NODES = 20_000  # nodes the aliases of one file may add, in total


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
            clip(e.problem),
            where=f"{where}:{e.line}",
            fix="simplify the YAML there (devices.yaml needs no deep nesting and no big shared values)",
        ) from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        raise ConfigError(
            clip(f"not valid YAML: {getattr(e, 'problem', None) or e}"),
            where=f"{where}{line}",
            fix="fix the YAML syntax (indentation, colons, quotes)",
        ) from None
    finally:
        loader.dispose()
    if data is None:
        data = {}
    problems = _schema_problems(data, node, where)
    if not problems:  # values by what they are, once their types are right
        problems = _value_problems(data, node, where)
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
    return Inventory(path=None, adb_servers=tuple(servers), entries=tuple(data.get("devices") or ()),
                     cluster=data.get("cluster"))  # fmt: skip


def _schema_problems(data: Any, node: Any, where: str) -> list[str]:
    """What the inventory schema says of `data`, with the YAML line of each problem."""
    from jsonschema import Draft202012Validator

    errors = sorted(Draft202012Validator(SCHEMA).iter_errors(data), key=lambda e: list(map(str, e.path)))
    problems = []
    for e in errors:
        if e.validator in ("if", "allOf"):
            continue
        line = _line_of(node, list(e.path)) if node is not None else 1
        problems.append(clip(f"{where}:{line} {_json_path(list(e.path))}: {e.message}"))
    return problems


# ---------------------------------------------------------------- values by what they are (issue 24)

_PATH_CHARS = re.compile(r"[A-Za-z0-9_@%+=:,./~-]+")  # a path that needs no quoting anywhere
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_HOSTNAME = re.compile(
    r"(?=.{1,253}\.?\Z)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?\Z"
)
_USER = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,31}\Z")  # POSIX login names (useradd's rule, upper case too)
_SERIAL = re.compile(r"[A-Za-z0-9._:-]{1,128}\Z")  # adb serials: R58M..., emulator-5554, 10.0.0.5:5555
# folders a workdir may not be (the device's files would be deleted, or mixed into the system's)
SYSTEM_FOLDERS = frozenset((
    "/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/media", "/mnt", "/opt", "/proc",
    "/root", "/run", "/sbin", "/srv", "/sys", "/tmp", "/usr", "/var", "/data", "/data/local", "/data/local/tmp",
    "/sdcard", "/storage", "/system", "/vendor", "/product", "/apex",
))  # fmt: skip
_UNDER_SYSTEM = ("/bin/", "/boot/", "/dev/", "/etc/", "/lib/", "/lib64/", "/proc/", "/sbin/", "/sys/", "/usr/",
                 "/system/", "/vendor/", "/apex/", "/product/")  # fmt: skip
_OWN = {
    "adb": "default: /data/local/tmp/edgefarm",
    "ssh": "default: /home/<user>/edgefarm",
    "local": "e.g. ~/edgefarm",
}
_FILE_FIELDS = ("python", "runner_path", "native_runner", "runtime_lib", "identity_file", "known_hosts")


def workdir_problem(value: str, kind: str) -> str | None:
    """Why `value` cannot be a device's work folder (pure), or None."""
    if _CONTROL.search(value):
        return f"{value!r} holds a control character; give a plain absolute path"
    shown = value[2:] if kind == "local" and value.startswith("~/") else value  # this host expands ~
    if not shown.startswith("/") and not (kind == "local" and value.startswith("~/")):
        return f"{value!r} is not an absolute path; give one such as /home/pi/edgefarm"
    if not _PATH_CHARS.fullmatch(value):
        bad = sorted({c for c in value if not _PATH_CHARS.fullmatch(c)})
        return f"{value!r} holds {' '.join(map(repr, bad))}; use letters, digits and _@%+=:,./~- only"
    normal = posixpath.normpath(value)
    if normal in SYSTEM_FOLDERS or f"{normal}/".startswith(_UNDER_SYSTEM):
        return f"{value!r} is a system folder or inside one; give a folder of edgefarm's own ({_OWN[kind]})"
    if normal != (value.rstrip("/") or "/") or "//" in value:
        return f"{value!r} is not normalised (no '.', '..' or '//' parts); write it as {normal!r}"
    return None


def name_problem(value: object) -> str | None:
    """Why `value` is not a device name devices.yaml would take (pure), or None: for names that reach
    edgefarm from elsewhere (a run folder imported into the history)."""
    if isinstance(value, str) and _NAME.match(value):
        return None
    return (f"{str(value)[:80]!r} is not a device name (a letter or digit, then at most 63 letters, digits, "
            "'.', '_' or '-')")  # fmt: skip


def host_problem(value: str) -> str | None:
    """Why `value` is not a host name or an IP address (pure), or None."""
    try:
        ipaddress.ip_address(value)
        return None
    except ValueError:
        pass
    if _HOSTNAME.match(value):
        return None
    return f"{value!r} is not a host name or an IP address"


def _value_problems(data: Any, node: Any, where: str) -> list[str]:
    """Workdirs, hosts, users, serials and file settings checked by what they are, with their lines."""
    problems = []
    devices = data.get("devices") if isinstance(data, dict) else None
    for i, entry in enumerate(devices if isinstance(devices, list) else []):
        kind = entry.get("kind")
        found: list[tuple[str, str]] = []
        if isinstance(entry.get("workdir"), str):
            found.append(("workdir", workdir_problem(entry["workdir"], kind)))
        if kind == "ssh":
            found.append(("host", host_problem(entry["host"])))
            if isinstance(entry.get("user"), str) and not _USER.match(entry["user"]):
                found.append(("user", f"{entry['user']!r} is not a login name (letters, digits, _ . -)"))
        if kind == "adb":
            if not _SERIAL.match(entry["serial"]):
                found.append(
                    ("serial", f"{entry['serial']!r} is not an adb serial (letters, digits, . _ : -)")
                )
            if isinstance(entry.get("server"), str):
                found.append(("server", address_problem(entry["server"])))
        for key in _FILE_FIELDS:
            if isinstance(entry.get(key), str) and _CONTROL.search(entry[key]):
                found.append((key, f"{entry[key]!r} holds a control character"))
        for j, lib in enumerate(entry.get("libs") or []):
            if isinstance(lib, str) and _CONTROL.search(lib):
                found.append((f"libs[{j}]", f"{lib!r} holds a control character"))
        for key, why in found:
            if why:
                path = ["devices", i, key.split("[")[0]]
                line = _line_of(node, path) if node is not None else 1
                problems.append(clip(f"{where}:{line} devices[{i}].{key}: {why}"))
    if (
        isinstance(data, dict)
        and isinstance(data.get("cluster"), str)
        and (why := address_problem(data["cluster"]))
    ):
        problems.append(
            clip(f"{where}:{_line_of(node, ['cluster']) if node is not None else 1} cluster: {why}")
        )
    for j, server in enumerate(data.get("adb_servers") or [] if isinstance(data, dict) else []):
        why = address_problem(server)
        if why:
            line = _line_of(node, ["adb_servers", j]) if node is not None else 1
            problems.append(clip(f"{where}:{line} adb_servers[{j}]: {why}"))
    return problems


def address_problem(value: str) -> str | None:
    """Why `value` is not HOST:PORT with a port in 1..65535 (an adb server, a Ray head), or None."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isascii() or not port.isdigit():
        return f"{value!r} is not HOST:PORT"
    if not 0 < int(port) < 65536:
        return f"{value!r}: port {port} is outside 1..65535"
    return host_problem(host)
