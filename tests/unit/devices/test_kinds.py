"""The one table of device kinds (orchestrator/devices/kinds.py): every kind devices.yaml accepts has
a row, the row's `make` builds a device of that kind (no I/O), and what the farm asks of a kind (a
phone, a board, this host's CPU, its runner) is read from the row, also for a kind named in a record."""

from __future__ import annotations

from orchestrator.devices.kinds import KINDS, kind_spec
from orchestrator.devices_yaml import SCHEMA
from orchestrator.runners import RUNNERS

ENTRIES = {
    "adb": {"name": "p", "kind": "adb", "serial": "A1"},
    "ssh": {"name": "b", "kind": "ssh", "host": "10.0.0.5"},
    "local": {"name": "h", "kind": "local"},
}


def test_every_kind_devices_yaml_accepts_has_one_row_that_makes_its_devices():
    accepted = SCHEMA["properties"]["devices"]["items"]["properties"]["kind"]["enum"]
    assert sorted(KINDS) == sorted(accepted) == sorted(ENTRIES)
    for name in KINDS:
        device = KINDS.get(name).make(ENTRIES[name])
        assert device.kind == name and device.name == ENTRIES[name]["name"]
        assert KINDS.get(name).runner in RUNNERS


def test_what_a_kind_is_comes_from_its_row_and_an_unknown_kind_is_nothing():
    rows = {n: (k.phone, k.board, k.shares_host_cpu) for n in KINDS if (k := KINDS.get(n))}
    assert rows == {"adb": (True, False, False), "ssh": (False, True, False), "local": (False, False, True)}
    other = kind_spec("tpu-pod")  # an outcome.json of a newer edgefarm
    assert (other.phone, other.board, other.shares_host_cpu) == (False, False, False)
