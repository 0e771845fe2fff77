"""Which phones get a stand-in board, and for which samples (the pure part of orchestrator/farm/fallback.py)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from android_runner.contract import SampleResult
from orchestrator.devices.types import DeviceInfo
from orchestrator.devices_yaml import parse_inventory
from orchestrator.errors import ConfigError
from orchestrator.farm.fallback import boards_for, needs, stand_in_boards
from orchestrator.farm.types import DeviceOutcome

INV = parse_inventory(
    """
devices:
  - {name: pixel-8, kind: adb, serial: A1}
  - {name: pi-5, kind: ssh, host: 10.0.0.5, fallback_for: [pixel-8, s24]}
  - {name: pi-4, kind: ssh, host: 10.0.0.4, fallback_for: [pixel-8]}
  - {name: pi-old, kind: ssh, host: 10.0.0.3, disabled: true, fallback_for: [pixel-8]}
""",
    "devices.yaml",
)


def samples(n: int) -> list[SimpleNamespace]:
    """needs() reads only the samples' ids."""
    return [SimpleNamespace(id=f"T{i}") for i in range(n)]


def test_boards_stand_in_in_devices_yaml_order_then_the_command_lines():
    table = stand_in_boards(INV, ["pi-4"])
    assert boards_for("pixel-8", table) == ("pi-5", "pi-4")  # pi-old is disabled
    assert boards_for("s24", table) == ("pi-5", "pi-4")  # --fallback stands in for any phone
    assert boards_for("redmi", stand_in_boards(INV, [])) == ()
    with pytest.raises(ConfigError, match="--fallback pi-9"):
        stand_in_boards(INV, ["pi-9"])


def test_a_lost_phone_needs_only_what_it_has_no_row_for_and_an_absent_one_everything():
    ss = samples(4)
    lost = DeviceOutcome(name="pixel-8", kind="adb", error="pixel-8: lost\n  fix: ...",
                         results=[SampleResult(id="T0", status="ok"), SampleResult(id="T1", status="error")])  # fmt: skip
    fine = DeviceOutcome(name="s24", kind="adb", results=[SampleResult(id=s.id, status="ok") for s in ss])
    absent = DeviceInfo(name="s24-b", kind="adb", state="absent")
    table = stand_in_boards(INV, [])
    got = needs([lost, fine], [absent], ss, table)
    assert [(n.phone, n.missing, n.lost) for n in got] == [("pixel-8", ("T2", "T3"), True)]  # s24-b: no board
    got = needs([lost, fine], [absent], ss, {**table, "*": ("pi-4",)})
    assert [(n.phone, n.missing, n.lost) for n in got] == [
        ("pixel-8", ("T2", "T3"), True), ("s24-b", ("T0", "T1", "T2", "T3"), False)]  # fmt: skip
    assert got[0].reason.startswith("lost mid-run (pixel-8: lost") and got[1].reason == "absent at the start"
    board = DeviceOutcome(name="pi-5", kind="ssh", error="down")  # boards are never stood in for
    interrupted = DeviceOutcome(name="pixel-8", kind="adb", error="stopped", interrupted=True)  # Ctrl-C: no
    assert needs([board, interrupted], [], ss, {"*": ("pi-4",)}) == []
    server = DeviceInfo(name="adb-server-10.0.0.9:5037", kind="adb", state="unreachable")
    assert needs([], [server], ss, {"*": ("pi-4",)}) == []  # a farm host that is down is not a phone
