"""User stories about phones on adb servers: finding them, their info, pushing, running, losing them."""

from __future__ import annotations

import os
import time
from pathlib import Path, PurePosixPath

import pytest

from orchestrator.devices.adb import AdbDevice
from orchestrator.devices.adb_discovery import discover_adb
from orchestrator.errors import DeviceError, DeviceLost

from .sandbox import PIXEL_8, PhoneSpec


def device(lab, label: str, **kw) -> AdbDevice:
    serial = lab.serials[label]
    host, port = lab.server_addrs[lab.owner[serial]]
    return AdbDevice(label, serial, server=(host, port), **kw)


def test_two_phones_on_one_server_and_one_on_another_are_found_with_their_info(adb_lab):
    phones, notes = discover_adb(adb_lab.server_addrs)
    by_serial = {p.serial: p for p in phones}
    assert notes == []
    for label in ("pixel8", "s24", "redmi"):
        serial = adb_lab.serials[label]
        assert by_serial[serial].state == "device"
        assert by_serial[serial].server == adb_lab.server_addrs[adb_lab.owner[serial]]
    assert by_serial[adb_lab.serials["redmi"]].server[1] == adb_lab.servers[1].port
    assert len({p.serial for p in phones}) == len(phones)  # each phone owned by one server

    pixel = device(adb_lab, "pixel8").info()
    assert (pixel.model, pixel.manufacturer, pixel.soc) == ("Pixel 8", "Google", "Google Tensor G3")
    assert pixel.abi == "arm64-v8a" and pixel.os == "Android 14 (SDK 34)"
    assert pixel.ram_mb == pytest.approx(7812544 / 1024, abs=0.1)
    assert pixel.free_storage_mb and pixel.free_storage_mb > 1
    assert pixel.extra["battery_pct"] == 87 and pixel.extra["battery_temp_c"] == 29.1
    assert pixel.extra["charging"] is True and pixel.extra["thermal_status"] == "light"

    s24 = device(adb_lab, "s24").info()
    assert (s24.model, s24.manufacturer, s24.soc) == ("SM-S921B", "samsung", "s5e9945")
    assert s24.os == "Android 14 (SDK 34)" and s24.extra["battery_temp_c"] == 33.4

    redmi = device(adb_lab, "redmi").info()
    assert redmi.soc == "MT6789" and redmi.os == "Android 13 (SDK 33)"


def test_an_unauthorized_phone_is_listed_with_the_fix_not_dropped(adb_lab):
    adb_lab.add_phone("locked", PIXEL_8, server=0, unauthorized=True)
    try:
        phones, _ = discover_adb(adb_lab.server_addrs)
        locked = next(p for p in phones if p.serial == adb_lab.serials["locked"])
        assert locked.state == "unauthorized"
        assert "accept the RSA prompt on the phone" in locked.problem
        assert {p.serial for p in phones} >= {adb_lab.serials[k] for k in ("pixel8", "s24", "redmi")}
    finally:
        adb_lab.remove_phone("locked")


def test_a_dead_farm_host_is_a_note_and_the_other_phones_still_show(adb_lab):
    from .phone import free_port

    phones, notes = discover_adb([*adb_lab.server_addrs, ("127.0.0.1", free_port())])
    assert len(notes) == 1 and "does not answer" in notes[0] and "adb -a" in notes[0]
    assert adb_lab.serials["redmi"] in {p.serial for p in phones}


def test_push_skips_unchanged_files_second_push_sends_zero_bytes(adb_lab, tmp_path):
    tree = tmp_path / "bundle"
    (tree / "media").mkdir(parents=True)
    (tree / "model.litertlm").write_bytes(os.urandom(3 * 2**20 + 17))
    (tree / "media" / "cat one.jpg").write_bytes(os.urandom(1000))
    progress: list[tuple[str, int, int]] = []
    dev = device(adb_lab, "s24")
    remote = PurePosixPath("/data/local/tmp/edgefarm/test-push")

    first = dev.push(tree, remote, on_progress=lambda *a: progress.append(a))
    assert (first.files, first.bytes_sent, first.files_skipped) == (2, 3 * 2**20 + 17 + 1000, 0)
    on_phone = adb_lab.device_root("s24") / "local/tmp/edgefarm/test-push/model.litertlm"
    assert on_phone.read_bytes() == (tree / "model.litertlm").read_bytes()
    model_updates = [p for p in progress if p[0].endswith("model.litertlm")]
    assert len(model_updates) > 1 and model_updates[-1][1] == model_updates[-1][2]  # per-file progress

    second = dev.push(tree, remote)
    assert (second.files, second.bytes_sent, second.files_skipped) == (0, 0, 2)

    (tree / "media" / "cat one.jpg").write_bytes(os.urandom(1000))  # one file changed
    third = dev.push(tree, remote)
    assert (third.files, third.bytes_sent, third.files_skipped) == (1, 1000, 1)

    back = tmp_path / "back.jpg"
    assert dev.pull(remote / "media" / "cat one.jpg", back) == 1000
    assert back.read_bytes() == (tree / "media" / "cat one.jpg").read_bytes()
    with pytest.raises(DeviceError, match="no file"):
        dev.pull(remote / "missing.txt", tmp_path / "missing.txt")


def test_run_streams_lines_and_returns_exit_codes_with_quoting_done_once(adb_lab):
    dev = device(adb_lab, "pixel8")
    lines: list[str] = []
    ex = dev.run(
        ["sh", "-c", 'for i in 1 2 3; do echo "line $i"; done; echo oops >&2; exit 7'],
        timeout_s=20,
        on_line=lines.append,
    )
    assert ex.code == 7 and lines == ["line 1", "line 2", "line 3"] and "oops" in ex.output_tail
    tricky = 'it\'s $HOME; `rm -rf /` "quoted"'
    lines.clear()
    assert dev.run(["echo", tricky], timeout_s=20, on_line=lines.append).code == 0
    assert lines == [tricky]  # reached the phone as one literal argument


def test_run_deadline_stops_a_hung_command(adb_lab):
    dev = device(adb_lab, "redmi")
    t0 = time.monotonic()
    ex = dev.run(["sleep", "30"], timeout_s=1.5)
    assert ex.timed_out and ex.code is None
    assert time.monotonic() - t0 < 15  # far below the command's 30 s, with room for a loaded box
    assert dev.alive()


def test_a_phone_that_vanishes_mid_run_is_reported_lost_not_hung(adb_lab):
    spec = PhoneSpec(name="Flaky", props=dict(PIXEL_8.props, **{"ro.product.model": "Flaky 1"}))
    phone = adb_lab.add_phone("flaky", spec, server=1)
    dev = device(adb_lab, "flaky", call_timeout_s=5)
    try:
        assert dev.alive()
        lines: list[str] = []

        def on_line(line: str) -> None:
            lines.append(line)
            if len(lines) == 2:
                phone.vanish()

        t0 = time.monotonic()
        with pytest.raises(DeviceLost) as err:
            dev.run(["sh", "-c", "while true; do echo tick; sleep 0.1; done"], timeout_s=30, on_line=on_line)
        assert time.monotonic() - t0 < 25  # the loop never ends by itself; its deadline is 30 s
        assert "flaky" in str(err.value) and "fix:" in str(err.value)
        assert not dev.alive()
        with pytest.raises(DeviceLost):
            dev.push(Path(__file__), PurePosixPath("/data/local/tmp/x.py"))
    finally:
        adb_lab.remove_phone("flaky")
