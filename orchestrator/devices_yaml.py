"""devices.yaml, parsed and checked: bounded YAML (no alias bombs, no deep nesting) and the JSON Schema
of its entries, every problem with its line."""

from __future__ import annotations

import re
from typing import Any

import yaml

from android_runner.backend import BACKENDS

from .devices.entry import CONTROL, address_problem, workdir_problem
from .devices.kinds import KINDS
from .devices.types import Inventory, clip
from .errors import ConfigError

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"  # a device's name: the schema's, and name_problem's
_NAME = re.compile(NAME_PATTERN.replace("$", r"\Z"))
_COMMON = {
    "name": {"type": "string", "pattern": NAME_PATTERN},
    "backend": {"enum": list(BACKENDS)},
    # a matrix run (docs/matrix.md): each backend in turn on this device, same samples, same settings
    "backends": {"type": "array", "items": {"enum": list(BACKENDS)}, "minItems": 1,
                 "maxItems": len(BACKENDS), "uniqueItems": True},
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
                "allOf": [  # each kind's own fields: its row's (devices/kinds.py)
                    {
                        "if": {"properties": {"kind": {"const": name}}},
                        "then": {
                            **({"required": list(k.required)} if k.required else {}),
                            "properties": {**_COMMON, "kind": {}, **k.fields},
                            "additionalProperties": False,
                        },
                    }
                    for name in KINDS
                    if (k := KINDS.get(name))
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


def name_problem(value: object) -> str | None:
    """Why `value` is not a device name devices.yaml would take (pure), or None: for names that reach
    edgefarm from elsewhere (a run folder imported into the history)."""
    if isinstance(value, str) and _NAME.match(value):
        return None
    return (f"{str(value)[:80]!r} is not a device name (a letter or digit, then at most 63 letters, digits, "
            "'.', '_' or '-')")  # fmt: skip


def _value_problems(data: Any, node: Any, where: str) -> list[str]:
    """Workdirs, file settings and each kind's own fields (its row's `checks`: hosts, users, serials)
    checked by what they are, with their lines."""
    problems = []
    devices = data.get("devices") if isinstance(data, dict) else None
    for i, entry in enumerate(devices if isinstance(devices, list) else []):
        kind = KINDS.get(entry["kind"])  # the schema took only known kinds
        found: list[tuple[str, str | None]] = []
        if isinstance(entry.get("workdir"), str):
            found.append(("workdir", workdir_problem(entry["workdir"], kind.workdir, kind.workdir_home)))
        found += kind.checks(entry)
        if "backend" in entry and "backends" in entry:
            both = ("`backend` and `backends` together: one says the device's backend, the other the backends "
                    "a run takes in turn; keep one")
            found.append(("backends", both))
        for key in kind.paths:
            if isinstance(entry.get(key), str) and CONTROL.search(entry[key]):
                found.append((key, f"{entry[key]!r} holds a control character"))
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
