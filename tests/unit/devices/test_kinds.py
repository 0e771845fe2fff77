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


NEW_KIND = r'''
import json, sys
from orchestrator.devices.kinds import KINDS, Kind
from orchestrator.devices.local import LocalDevice
from orchestrator.devices.types import DeviceInfo

class Phone(LocalDevice):  # "its module": a device of the new kind (here this host's, renamed)
    kind = "ios"

def discover(inv, env):
    return [], [DeviceInfo(name="iphone-7", kind="ios", state="unauthorized", problem="trust this computer")]

KINDS.add("ios", Kind(
    "ios", "python", lambda e: Phone(name=e["name"]), phone=True,
    fields={"udid": {"type": "string"}}, required=("udid",),
    checks=lambda e: [("udid", None if e["udid"].isalnum() else f"{e['udid']!r} is not a UDID")],
    workdir="default: /var/mobile/edgefarm", discover=discover,
))

from orchestrator.devices_yaml import parse_inventory  # noqa: E402  (the schema is built from the rows)
from orchestrator.errors import ConfigError  # noqa: E402
from orchestrator.inventory import select_devices  # noqa: E402
from orchestrator.runners.readiness import state_checks  # noqa: E402

said = {}
for name, text in {
    "bad_udid": "devices:\n  - name: i1\n    kind: ios\n    udid: 'a b'\n",
    "no_udid": "devices:\n  - name: i1\n    kind: ios\n",
    "other_field": "devices:\n  - name: i1\n    kind: ios\n    udid: A1\n    serial: X\n",
    "system_workdir": "devices:\n  - name: i1\n    kind: ios\n    udid: A1\n    workdir: /usr/x\n",
}.items():
    try:
        parse_inventory(text, "devices.yaml")
        said[name] = "accepted"
    except ConfigError as e:
        said[name] = str(e)
inv = parse_inventory("devices:\n  - name: i1\n    kind: ios\n    udid: A1\n", "devices.yaml")
sel = select_devices(inv, "all")
said["unusable"] = [u.name for u in sel.unusable]
said["checks"] = [c.need for c in state_checks(DeviceInfo(name="i1", kind="ios"))]
print(json.dumps(said))
'''


def test_a_new_kind_is_its_module_and_one_row_schema_checks_and_discovery_included():
    """An iPhone kind added by one row (in a fresh process: the table is frozen once read): devices.yaml
    takes its entry's own fields and refuses others, its value check and workdir hint name the line,
    discovery finds its devices, and the readiness checks ask it as a phone (authorization, power)."""
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", NEW_KIND], capture_output=True, text=True, check=True).stdout
    said = json.loads(out)
    assert "devices.yaml:4 devices[0].udid: 'a b' is not a UDID" in said["bad_udid"]
    assert "devices.yaml:2" in said["no_udid"] and "'udid' is a required property" in said["no_udid"]
    assert "'serial' was unexpected" in said["other_field"]  # an adb field is not an iPhone's
    assert "devices.yaml:5 devices[0].workdir" in said["system_workdir"]
    assert "default: /var/mobile/edgefarm" in said["system_workdir"]
    assert said["unusable"] == ["iphone-7"]
    assert said["checks"][:2] == ["authorization", "power"]


def test_no_kind_name_is_compared_outside_the_kinds_table_and_the_device_modules():
    """`kind == "adb"` and its like live nowhere but the rows: everything else asks a capability."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[3] / "orchestrator"
    own = {"kinds.py", "adb.py", "ssh.py", "local.py", "adb_discovery.py", "ssh_link.py", "ssh_info.py"}
    names = "|".join(KINDS)
    compared = re.compile(rf"""(==|!=|\bin)\s*\(?["']({names})["']|["']({names})["']\s*(==|!=)|else ["']({names})["']""")
    found = [
        f"{p.relative_to(root)}:{n}"
        for p in sorted(root.rglob("*.py"))
        if not (p.parent.name == "devices" and p.name in own)
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if compared.search(line) and "--devices" not in line and "spec" not in line
    ]
    assert found == []
