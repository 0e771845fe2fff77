"""Parsing a board's info reply (captured from a real Linux host) and the Pi-only probes."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from orchestrator.devices.ssh_info import (
    MARKER,
    PROBES,
    board_info,
    info_script,
    parse_cpuinfo,
    parse_os_release,
    parse_python_probe,
    parse_throttled,
    parse_vcgencmd_temp,
    split_sections,
)

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "ssh_info_linux_x86_64.txt"


def test_a_real_reply_fills_every_field_a_linux_host_has():
    info = board_info("pi-lab", "10.0.0.5:22", split_sections(FIXTURE.read_text()))
    assert info.kind == "ssh" and info.serial == "10.0.0.5:22"
    assert info.cores == 2 and info.ram_mb and info.ram_mb > 1000
    assert info.cpu and info.abi == "x86_64" and info.os.startswith("Debian")
    assert info.free_storage_mb and info.free_storage_mb > 0
    assert info.model == info.extra["hostname"]  # no device tree, no `Model` line: the hostname
    assert info.extra["temp_c"] is None and info.extra["throttled"] is None  # not a Pi: tolerated
    assert info.extra["python_version"] == "3.11.7" and info.extra["litert_lm"] is True


def test_an_empty_reply_leaves_fields_empty_instead_of_failing():
    info = board_info("b", "h:22", split_sections(""))
    assert (info.cores, info.ram_mb, info.free_storage_mb, info.model) == (None, None, None, "")
    assert info.extra["litert_lm"] is None


def test_the_script_quotes_the_workdir_and_python_and_has_one_marker_per_probe():
    s = info_script(PurePosixPath("/home/pi/my dir;rm -rf x"), "/opt/py env/bin/python3")
    assert s.count(f"echo {MARKER}") == len(PROBES)
    assert "d='/home/pi/my dir;rm -rf x'" in s and "'/opt/py env/bin/python3' -c" in s


def test_raspberry_pi_cpuinfo_gives_the_board_model():
    text = "processor\t: 0\nBogoMIPS\t: 108.00\nCPU implementer\t: 0x41\nCPU part\t: 0xd0b\n\n"
    text += "Revision\t: d04170\nModel\t\t: Raspberry Pi 5 Model B Rev 1.0\n"
    cpu, model = parse_cpuinfo(text)
    assert model == "Raspberry Pi 5 Model B Rev 1.0" and cpu == "0x41 part 0xd0b"


def test_vcgencmd_temperature_and_throttle_bits():
    assert parse_vcgencmd_temp("temp=48.3'C") == 48.3
    assert parse_vcgencmd_temp("VCHI initialization failed") is None
    t = parse_throttled("throttled=0x50005")
    assert t == {
        "raw": "0x50005",
        "now": ["under-voltage", "throttled"],
        "occurred": ["under-voltage", "throttled"],
    }
    assert parse_throttled("throttled=0x0")["now"] == []


def test_os_release_and_python_probe():
    assert (
        parse_os_release('NAME="Debian GNU/Linux"\nVERSION="12 (bookworm)"\n')
        == "Debian GNU/Linux 12 (bookworm)"
    )
    assert parse_python_probe("3.11.2 False") == ("3.11.2", False)
    assert parse_python_probe("") == ("", None)
