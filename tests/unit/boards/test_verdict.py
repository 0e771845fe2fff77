"""The setup verdict: a board's facts against the pinned wheels and the model's size (pure)."""

from __future__ import annotations

from orchestrator.boards.verdict import judge
from orchestrator.devices.types import DeviceInfo

MB = 2**20


def pi5(**extra) -> DeviceInfo:
    facts = {"python_version": "3.11.2", "libc": "glibc 2.36", "venv_available": True, **extra}
    return DeviceInfo(
        name="pi-5", kind="ssh", abi="aarch64", ram_mb=8064.0, free_storage_mb=20000.0, extra=facts
    )


def status(v, name: str) -> str:
    return next(c.status for c in v.checks if c.name == name)


def test_a_pi5_on_bookworm_passes_every_check():
    v = judge(pi5(), 600 * MB, offline=False)
    assert v.ok and [c.status for c in v.checks] == ["ok"] * 5


def test_a_32_bit_os_old_python_old_glibc_and_musl_each_fail_with_a_fix():
    v = judge(DeviceInfo(name="pi", kind="ssh", abi="armv7l", extra={"python_version": "3.9.2", "libc": "glibc 2.24"}), MB,
              offline=True)  # fmt: skip
    assert not v.ok and [c.name for c in v.failures] == ["architecture", "python", "glibc"]
    assert all(c.fix for c in v.failures) and "64-bit" in v.failures[0].fix
    assert status(judge(pi5(libc=""), MB, offline=True), "glibc") == "warn"
    assert status(judge(pi5(libc="musl 1.2"), MB, offline=True), "glibc") == "fail"


def test_no_python_and_no_venv_module():
    assert judge(pi5(python_version=""), MB, offline=True).failures[0].found == "no python3"
    assert status(judge(pi5(venv_available=False), MB, offline=False), "python") == "fail"
    assert status(judge(pi5(venv_available=False), MB, offline=True), "python") == "ok"  # no pip needed


def test_disk_and_ram_are_weighed_against_the_model():
    small = DeviceInfo(name="pi", kind="ssh", abi="aarch64", ram_mb=2048.0, free_storage_mb=1000.0,
                       extra={"python_version": "3.11.2", "libc": "glibc 2.36"})  # fmt: skip
    assert status(judge(small, 800 * MB, offline=True), "disk") == "fail"  # 200 env + 800 + 50 > 1000
    assert status(judge(small, 100 * MB, offline=True), "disk") == "ok"
    assert status(judge(small, 1900 * MB, offline=True), "ram") == "warn"  # fits, no headroom
    assert status(judge(small, 3000 * MB, offline=True), "ram") == "fail"
