"""devices.yaml is input from outside: an alias bomb, a recursive alias or deep nesting is refused
quickly, with a short message naming the line (issue 10: 12 s, 2.1 GB and a 312 MB error before)."""

from __future__ import annotations

import time

import pytest

from orchestrator.devices.types import MAX_MESSAGE_CHARS
from orchestrator.devices_yaml import parse_inventory
from orchestrator.errors import ConfigError


def alias_bomb(levels: int = 9) -> str:
    """Nine times more values per level, all inside a checked field (workdir must be a string)."""
    lines = ["devices:", "  - name: this-host", "    kind: local", "    workdir:"]
    lines.append("      - &l0 [1, 1, 1, 1, 1, 1, 1, 1, 1]")
    for i in range(1, levels):
        lines.append(f"      - &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_fast_with_a_short_message_naming_the_line():
    t0 = time.monotonic()
    with pytest.raises(ConfigError) as e:
        parse_inventory(alias_bomb(), "devices.yaml")
    assert time.monotonic() - t0 < 5.0  # expanded, its 9**9 values would take minutes; room for a loaded box
    assert len(str(e.value)) < 600
    assert e.value.where.startswith("devices.yaml:") and int(e.value.where.split(":")[1]) >= 5
    assert "alias" in e.value.what and "fix:" in str(e.value)


def test_a_recursive_alias_is_refused():
    with pytest.raises(ConfigError) as e:
        parse_inventory("devices: &a [*a]\n", "d.yaml")
    assert "refers to its own anchor" in e.value.what and e.value.where == "d.yaml:1"


def test_deep_nesting_is_refused_not_a_recursion_error():
    with pytest.raises(ConfigError) as e:
        parse_inventory("devices: " + "[" * 5000 + "]" * 5000 + "\n", "d.yaml")
    assert "nested deeper" in e.value.what


def test_modest_aliases_and_merge_keys_still_work():
    text = "devices:\n  - &pi {kind: local, name: a, threads: 2}\n  - {<<: *pi, name: b}\n"
    inv = parse_inventory(text, "d.yaml")
    assert [dict(e) for e in inv.entries] == [
        {"kind": "local", "name": "a", "threads": 2},
        {"kind": "local", "name": "b", "threads": 2},
    ]


def test_a_huge_value_in_a_checked_field_is_clipped_in_the_message():
    text = 'devices: [{name: a, kind: local, threads: "' + "y" * 100_000 + '"}]\n'
    with pytest.raises(ConfigError) as e:
        parse_inventory(text, "d.yaml")
    problem_lines = [line for line in e.value.what.splitlines() if "threads" in line]
    assert problem_lines and all(len(line.strip()) <= MAX_MESSAGE_CHARS for line in problem_lines)
    assert problem_lines[0].endswith(" chars)")
