"""Issue 24: hostile devices.yaml values and model file names are refused by what they are, through
the real CLI, naming file:line and field, before anything touches a device (they were accepted: a board
workdir with `;` or `$(...)` made literal folders, a phone workdir of `/`, `..` or `-rf` failed later
at the push, a newline split the runner's flags and was reported as an unloadable model)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .conftest import TINY_TEXT, edgefarm

PHONE = "  - name: pixel\n    kind: adb\n    serial: emulator-5554\n"
BOARD = "  - name: pi\n    kind: ssh\n    host: 127.0.0.1\n"


@pytest.mark.parametrize(
    ("entry", "field", "says"),
    [
        (BOARD + "    workdir: /home/pi/x;touch X\n", "workdir", "';'"),
        (BOARD + '    workdir: "/home/pi/$(id)"\n', "workdir", "holds '$'"),
        (BOARD + '    workdir: "/home/pi/a\\nb"\n', "workdir", "control character"),
        (PHONE + "    workdir: /\n", "workdir", "system folder"),
        (PHONE + "    workdir: ..\n", "workdir", "not an absolute path"),
        (PHONE + "    workdir: -rf\n", "workdir", "not an absolute path"),
        (PHONE + "    workdir: edgefarm\n", "workdir", "not an absolute path"),
        (PHONE + "    workdir: /data/local/tmp/../../system\n", "workdir", "not normalised"),
        (PHONE + '    workdir: "/data/local/tmp/e\\nx"\n', "workdir", "control character"),
        ('  - name: pi\n    kind: ssh\n    host: "127.0.0.1;touch X"\n', "host", "not a host name"),
        (BOARD + "    user: root -oProxyCommand=x\n", "user", "not a login name"),
        ('  - name: pixel\n    kind: adb\n    serial: "emulator-5554 -e"\n', "serial", "not an adb serial"),
        (PHONE + '    runtime_lib: "/tmp/lib\\n.so"\n', "runtime_lib", "control character"),
    ],
)
def test_a_hostile_devices_yaml_value_is_refused_naming_line_and_field(tmp_path: Path, entry, field, says):
    inv = tmp_path / "devices.yaml"
    inv.write_text("# a lab\ndevices:\n" + entry)
    line = 1 + next(
        i for i, ln in enumerate(inv.read_text().splitlines()) if ln.strip().startswith(f"{field}:")
    )
    for command in (("devices", "--inventory", str(inv)),
                    ("run", "--devices", "all", "--inventory", str(inv), "--out", str(tmp_path / "runs"))):  # fmt: skip
        p = edgefarm(*command)
        assert p.returncode == 2, (command, p.stdout, p.stderr)
        assert "Traceback" not in p.stderr
        assert f"{inv}:{line} devices[0].{field}: " in p.stderr and says in p.stderr, p.stderr
        assert "fix:" in p.stderr
    assert sorted(x.name for x in tmp_path.iterdir()) == ["devices.yaml"]  # nothing made, nothing run


def test_plain_values_still_pass(tmp_path: Path):
    inv = tmp_path / "devices.yaml"
    inv.write_text("devices:\n" + PHONE + "    workdir: /data/local/tmp/edgefarm-2/\n"
                   "  - name: this-host\n    kind: local\n    workdir: " + str(tmp_path / "work") + "\n")  # fmt: skip
    p = edgefarm("devices", "--inventory", str(inv), "--json")
    assert "invalid device inventory" not in p.stderr, p.stderr
    assert "this-host" in json.dumps(json.loads(p.stdout))


def test_a_model_file_name_with_a_newline_is_refused_before_any_device(tmp_path: Path, local_inventory):
    model = tmp_path / "tiny\n--backend=npu.litertlm"
    shutil.copy(TINY_TEXT, model)
    out = tmp_path / "runs"
    p = edgefarm("run", "--model", str(model), "--devices", "local", "--inventory", str(local_inventory()),
                 "--out", str(out), "--limit", "1")  # fmt: skip
    assert p.returncode == 4, p.stderr
    assert (
        "Traceback" not in p.stderr
        and "holds a control character" in p.stderr
        and "rename the file" in p.stderr
    )
    assert not out.exists()
