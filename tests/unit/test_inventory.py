from pathlib import Path

import pytest

from orchestrator.devices_yaml import parse_inventory
from orchestrator.errors import ConfigError
from orchestrator.inventory import load_inventory, select_devices

GOOD = """\
adb_servers: [127.0.0.1:5037, farmhost-2.lab:5037]
devices:
  - name: pixel-8
    kind: adb
    serial: 37121FDJH002AB
    backend: gpu
  - name: this-host
    kind: local
    threads: 2
"""


def test_good_inventory_parses():
    inv = parse_inventory(GOOD, "devices.yaml")
    assert inv.adb_servers == (("127.0.0.1", 5037), ("farmhost-2.lab", 5037))
    assert [e["name"] for e in inv.entries] == ["pixel-8", "this-host"]


def test_every_problem_is_reported_with_its_line():
    text = """\
devices:
  - name: pi-5
    kind: ssh
    port: 99999
  - name: phone
    kind: adb
  - name: x
    kind: toaster
  - name: this-host
    kind: local
    colour: red
"""
    with pytest.raises(ConfigError) as e:
        parse_inventory(text, "devices.yaml")
    msg = str(e.value)
    assert "devices.yaml:4 devices[0].port" in msg  # port out of range, on its own line
    assert "'host' is a required property" in msg  # ssh needs a host
    assert "'serial' is a required property" in msg  # adb needs a serial
    assert "devices.yaml:8 devices[2].kind" in msg and "toaster" in msg
    assert "colour" in msg  # unknown field named
    assert "fix:" in msg


def test_yaml_syntax_error_names_the_line():
    with pytest.raises(ConfigError) as e:
        parse_inventory("devices:\n  - name: a\n   kind: local\n", "inv.yaml")
    assert "inv.yaml:3" in str(e.value)


def test_duplicate_names_rejected():
    with pytest.raises(ConfigError, match="used twice"):
        parse_inventory("devices:\n  - {name: a, kind: local}\n  - {name: a, kind: local}\n", "d.yaml")


def test_missing_file_is_a_clear_error(tmp_path: Path):
    with pytest.raises(ConfigError, match="inventory file not found"):
        load_inventory(tmp_path / "nope.yaml")


def test_all_without_devices_means_this_host():
    sel = select_devices(parse_inventory("{}", "d.yaml"), "all")
    assert [d.kind for d in sel.devices] == ["local"]
    assert any("this host" in n for n in sel.notes)


def test_several_local_entries_are_several_devices_of_this_host(tmp_path: Path):
    text = f"devices:\n  - {{name: cpu-a, kind: local, workdir: {tmp_path}/a}}\n  - {{name: cpu-b, kind: local, threads: 1}}\n"
    inv = parse_inventory(text, "d.yaml")
    assert [d.name for d in select_devices(inv, "cpu-b,cpu-a").devices] == ["cpu-b", "cpu-a"]
    assert [d.name for d in select_devices(inv, "local").devices] == ["cpu-a"]  # `local`: the first
    assert select_devices(inv, "cpu-b").devices[0].threads == 1


def test_unknown_device_name_lists_known_ones():
    with pytest.raises(ConfigError) as e:
        select_devices(parse_inventory("{}", "d.yaml"), "pixel-9")
    assert "pixel-9" in str(e.value) and "this-host" in str(e.value)


def test_repo_example_inventory_is_valid():
    inv = load_inventory(Path(__file__).resolve().parents[2] / "devices.yaml")
    assert {e["kind"] for e in inv.entries} == {"adb", "ssh", "local"}
