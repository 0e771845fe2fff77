"""Parsing a board's info reply (captured from a real Linux host) and the Pi-only probes."""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath

from orchestrator.devices.files import runner_sha256  # what the probe's command must agree with
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
    soc_name,
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


PI5_CPUINFO = (
    "".join(
        f"processor\t: {n}\nBogoMIPS\t: 108.00\nCPU implementer\t: 0x41\nCPU architecture: 8\n"
        "CPU variant\t: 0x4\nCPU part\t: 0xd0b\nCPU revision\t: 1\n\n"
        for n in range(4)
    )
    + "Hardware\t: BCM2835\nRevision\t: d04170\nModel\t\t: Raspberry Pi 5 Model B Rev 1.0\n"
)


def test_raspberry_pi_cpuinfo_gives_the_board_model_and_its_cores_by_part_number():
    cpu, model = parse_cpuinfo(PI5_CPUINFO)
    assert model == "Raspberry Pi 5 Model B Rev 1.0" and cpu == "4x Cortex-A76"


def test_a_pi5_is_a_bcm2712_not_the_kernels_fixed_bcm2835():
    model = "Raspberry Pi 5 Model B Rev 1.0"
    assert soc_name(model, "raspberrypi,5-model-b\nbrcm,bcm2712", PI5_CPUINFO) == "BCM2712"
    assert soc_name(model, "", PI5_CPUINFO) == "BCM2712"  # no compatible: from the model
    assert soc_name("Raspberry Pi 4 Model B Rev 1.4", "", PI5_CPUINFO) == "BCM2711"
    assert soc_name("Some Board", "", "Hardware\t: Amlogic S905\n") == "Amlogic S905"


def test_big_little_cores_are_counted_per_kind():
    text = "".join(f"CPU implementer\t: 0x41\nCPU part\t: {p}\n\n" for p in ["0xd05"] * 4 + ["0xd0b"] * 2)
    assert parse_cpuinfo(text)[0] == "4x Cortex-A55 + 2x Cortex-A76"


def test_the_runtime_view_wins_over_the_shell():
    """An x86 shell around an emulated aarch64 python: architecture, cpuinfo and device tree from python."""
    probe = {
        "version": "3.11.2", "executable": "/w/venv/bin/python3", "machine": "aarch64", "candidate": "python3",
        "libc": "glibc 2.36", "litert_lm": True, "litert_lm_version": "0.18.1", "venv": True,
        "dt_model": "Raspberry Pi 5 Model B Rev 1.0", "dt_compatible": "raspberrypi,5-model-b\nbrcm,bcm2712",
        "cpuinfo": PI5_CPUINFO,
    }  # fmt: skip
    sections = split_sections(FIXTURE.read_text())
    sections["python"] = "EDGEFARM-PY " + json.dumps({**probe, "litert_lm": False}) + "\n"
    sections["python"] += "EDGEFARM-PY " + json.dumps(probe) + "\n"
    sections["runner"] = "ab" * 32 + "  -"
    info = board_info("pi", "h:22", sections)
    assert (info.abi, info.cpu, info.soc, info.model) == (
        "aarch64", "4x Cortex-A76", "BCM2712", "Raspberry Pi 5 Model B Rev 1.0")  # fmt: skip
    assert info.extra["shell_machine"] == "x86_64" and info.extra["litert_lm_version"] == "0.18.1"
    assert info.extra["python_path"] == "/w/venv/bin/python3" and info.extra["runner_sha256"] == "ab" * 32


def test_the_runner_hash_matches_what_the_board_prints(tmp_path):
    import subprocess

    files = {"./android_runner/a.py": b"x = 1\n", "./entry.py": b"import a\n", "./android_runner/B.py": b""}
    for name, data in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    out = subprocess.run(
        "find . -type f -name '*.py' | LC_ALL=C sort | xargs -r sha256sum | sha256sum",
        shell=True, cwd=tmp_path, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert out.split()[0] == runner_sha256(files)


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
