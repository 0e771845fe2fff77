"""Stand-in boards on farm hosts (no Ray: the agent is a plain class): a farm host's devices.yaml says
which phones its board stands in for (`fallback_for:`), the agent's listing carries it to the
controller, and the run's stand-in table (fallback.stand_in_boards) takes it with --fallback's boards.
The run itself, a phone lost on h2 and a board on h3 through the real CLI, is
tests/lab/cluster/test_fallback.py."""

from __future__ import annotations

import json
import socket

import pytest

from orchestrator.cluster.agent import FarmHostAgent
from orchestrator.devices.types import Inventory
from orchestrator.errors import ConfigError
from orchestrator.farm.fallback import stand_in_boards


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: nothing listens there


def test_a_farm_hosts_devices_yaml_says_which_phones_its_board_stands_in_for(tmp_path, monkeypatch):
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(_closed_port()))  # no phones on this "host"
    board = {"name": "pi-h3", "kind": "ssh", "host": "127.0.0.1", "port": _closed_port(), "user": "pi",
             "workdir": "/home/pi/edgefarm", "fallback_for": ["redmi-note-13", "pixel-8"]}  # fmt: skip
    off = dict(board, name="pi-off", disabled=True, fallback_for=["pixel-8"])
    inv = tmp_path / "devices.yaml"
    inv.write_text(json.dumps({"devices": [board, off]}))
    listing = FarmHostAgent("h3", cache_root=tmp_path / "cache", inventory=inv).devices()
    assert listing.fallback_for == {
        "pi-h3": ("redmi-note-13", "pixel-8")
    }  # a disabled board stands in for none
    assert [u.name for u in listing.unusable] == ["pi-h3"]  # down now: the run tries it when a phone is lost


def test_the_stand_in_table_takes_the_farm_hosts_boards_and_fallback_names_them():
    none = Inventory(path=None, adb_servers=(), entries=())
    listed = {"pi-h3": ("redmi-note-13",), "pi-h1": ()}
    assert stand_in_boards(none, [], listed=listed) == {"redmi-note-13": ("pi-h3",), "*": ()}
    assert stand_in_boards(none, ["pi-h1"], listed=listed)["*"] == ("pi-h1",)
    with pytest.raises(ConfigError) as e:
        stand_in_boards(none, ["pi-h2"], listed=listed)
    assert "--fallback pi-h2: no such board" in str(e.value) and "pi-h1, pi-h3" in str(e.value)
