"""What a run needs on a device (runners/readiness.py, android_choice.py): the checks `doctor` prints and
`run` applies before anything starts."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path, PurePosixPath

import pytest
from elftools.elf.elffile import ELFFile

from orchestrator.devices.types import DeviceInfo
from orchestrator.runners.android_choice import (
    FIX_BUILD_NATIVE,
    STORAGE_MARGIN_MB,
    RunnerChoice,
    binary_abi,
    phone_checks,
    runner_check,
    runtime_check,
)
from orchestrator.runners.base import Check, Need
from orchestrator.runners.readiness import Readiness, state_checks

PINNED = "0.18.1"


def elf(path: Path, machine: int) -> Path:
    """A little-endian 64-bit ELF header for `machine` (e_machine: 183 aarch64, 62 x86-64, 40 arm), as a
    compiler writes it: e_ident, e_type EXEC, e_machine, e_version 1, ..., e_ehsize 64."""
    head = b"\x7fELF\x02\x01\x01" + bytes(9) + (2).to_bytes(2, "little") + machine.to_bytes(2, "little")
    head += (1).to_bytes(4, "little") + bytes(28) + (64).to_bytes(2, "little")
    path.write_bytes(head.ljust(64, b"\0"))
    return path


def phone(**kw) -> DeviceInfo:
    base = {"name": "p", "kind": "adb", "serial": "S1", "abi": "arm64-v8a", "abis": ("arm64-v8a",),
            "free_storage_mb": 9000.0, "ram_mb": 8000.0, "extra": {"thermal_status": "none", "external_power": ""}}  # fmt: skip
    return DeviceInfo(**{**base, **kw})


def test_the_abi_of_a_runner_is_read_from_its_elf_header(tmp_path):
    assert binary_abi(elf(tmp_path / "a", 183)) == "arm64-v8a"
    assert binary_abi(elf(tmp_path / "b", 62)) == "x86_64"
    assert binary_abi(elf(tmp_path / "c", 40)) == "armeabi-v7a"
    (tmp_path / "s").write_text("#!/system/bin/sh\nexec python3 x\n")
    assert binary_abi(tmp_path / "s") == "script"  # the lab's upstream stand-in runs wherever sh does
    (tmp_path / "t").write_bytes(b"not a program")
    assert binary_abi(tmp_path / "t") == ""
    (tmp_path / "u").write_bytes(elf(tmp_path / "u", 183).read_bytes()[:19])  # cut inside e_machine
    assert binary_abi(tmp_path / "u") == ""
    assert binary_abi(elf(tmp_path / "v", 21)) == "e_machine 21"  # EM_PPC64: named, never an ABI


@pytest.mark.parametrize("case", ["host", "big-endian"])
def test_the_header_read_agrees_with_pyelftools(tmp_path, case):
    """binary_abi reads 20 bytes itself (start-up cost); pyelftools, which the build uses, reads the same
    e_machine from this host's own python and from a big-endian (MSB) header."""
    if case == "host":
        path = Path(os.path.realpath(sys.executable))
    else:
        head = bytearray(elf(tmp_path / "be", 0).read_bytes())
        head[5] = 2  # ELFDATA2MSB: every field big-endian
        for at, value, size in (
            (16, 2, 2),
            (18, 22, 2),
            (20, 1, 4),
            (52, 64, 2),
        ):  # type, EM_S390, version, size
            head[at : at + size] = value.to_bytes(size, "big")
        path = tmp_path / "be"
        path.write_bytes(bytes(head))
    with open(path, "rb") as f:
        theirs = ELFFile(f).header["e_machine"]
    names = {"EM_AARCH64": "arm64-v8a", "EM_X86_64": "x86_64", "EM_S390": "e_machine 22"}
    assert binary_abi(path) == names[theirs]


def test_a_runner_for_another_abi_fails_with_the_fix_that_fits_the_phone(tmp_path):
    arm64 = RunnerChoice("native", elf(tmp_path / "edgefarm_runner", 183), tmp_path / "lib.so")
    assert runner_check(arm64, phone()).ok
    x86 = RunnerChoice("native", elf(tmp_path / "host_runner", 62), tmp_path / "lib.so")
    wrong = runner_check(x86, phone())
    assert (
        not wrong.ok and wrong.blocks and "built for x86_64" in wrong.found and wrong.fix == FIX_BUILD_NATIVE
    )
    # a phone that also runs the host's ABI (an x86_64 emulator listing arm64-v8a) is served
    assert runner_check(x86, phone(abis=("arm64-v8a", "x86_64"))).ok
    # a 32-bit phone: no build of edgefarm's runners serves it; the fix says what would
    old = runner_check(arm64, phone(abi="armeabi-v7a", abis=("armeabi-v7a", "armeabi")))
    assert not old.ok and "no runner for armeabi-v7a/armeabi" in old.found
    assert "64-bit ARM phone" in old.fix and "runner_path" in old.fix


def test_the_runtime_library_must_be_the_one_the_runner_carries_and_name_the_pinned_version(tmp_path):
    lib = tmp_path / "lib" / "liblitert-lm.so"
    lib.parent.mkdir()
    lib.write_bytes(b"the pinned library")
    sha = hashlib.sha256(lib.read_bytes()).hexdigest()
    runner = tmp_path / "edgefarm_runner"
    runner.write_bytes(b"\x7fELF...\0" + sha.encode() + b"\0" + PINNED.encode() + b"\0")
    (lib.parent / "VERSION").write_text(f"litert-lm-api {PINNED} (android wheel)\n")
    assert runtime_check(RunnerChoice("native", runner, lib)).ok
    (lib.parent / "VERSION").unlink()  # a library with no VERSION beside it is not the pinned one
    bad = runtime_check(RunnerChoice("native", runner, lib))
    assert not bad.ok and "version unknown" in bad.found and "EDGEFARM_ALLOW_RUNTIME=1" in bad.fix
    (lib.parent / "VERSION").write_text(f"litert-lm-api {PINNED}\n")
    lib.write_bytes(b"a stub library")  # another library: its sha256 is not the one the runner carries
    stub = runtime_check(RunnerChoice("native", runner, lib))
    assert not stub.ok and f"(sha256 {sha})" in stub.found
    allowed = runtime_check(RunnerChoice("native", runner, lib, allow_runtime=True))
    assert allowed.ok and "EDGEFARM_ALLOW_RUNTIME=1" in allowed.found


def test_state_checks_authorization_power_and_heat():
    unauthorized = state_checks(
        phone(state="unauthorized", problem="phone is unauthorized: accept the RSA prompt")
    )
    assert [(c.need, c.ok) for c in unauthorized] == [("authorization", False)]
    checks = {
        c.need: c for c in state_checks(phone(extra={"thermal_status": "severe", "external_power": "usb"}))
    }
    assert checks["authorization"].ok
    assert not checks["power"].ok and not checks["power"].blocks and "usb" in checks["power"].found
    assert (
        not checks["thermal"].ok and not checks["thermal"].blocks and "--cooldown-c" in checks["thermal"].fix
    )
    cool = {c.need: c for c in state_checks(phone())}
    assert cool["power"].ok and cool["thermal"].ok


def test_a_device_is_ready_unless_a_blocking_check_failed():
    warn = Check("power", False, "on external power", "unplug", blocks=False)
    assert Readiness(phone(), (Check("runner", True, "ok"), warn)).ready
    down = Readiness(
        phone(), (Check("runner", False, "no runner for armeabi-v7a", "use a 64-bit phone"), warn)
    )
    assert not down.ready and down.problem == "runner: no runner for armeabi-v7a; fix: use a 64-bit phone"


def test_a_device_is_assessed_by_its_kinds_runner():
    """assess() asks the runner of the device's kind for its own checks (this host: the Python runner)."""
    from orchestrator.devices.local import LocalDevice
    from orchestrator.runners.base import Need
    from orchestrator.runners.readiness import assess

    device = LocalDevice()
    verdict = assess(device, device.info(), Need(model_bytes=1), {})
    assert verdict.ready and [c.need for c in verdict.checks] == ["reachable", "runtime"]


class StatPhone:
    """A phone for phone_checks: the upstream runner (a script), and a `stat` that answers with the
    sizes of the files `held` names, as toybox's `stat -c '%n %s'` prints them (a missing file: no line)."""

    name, phone_runner, native_runner, runtime_lib, libs = "p", "upstream", None, None, ()
    workdir = PurePosixPath("/data/local/tmp/edgefarm")

    def __init__(self, runner: Path, held: dict[str, int]) -> None:
        self.runner_binary, self.held, self.asked = runner, held, []

    def run(self, argv, timeout_s, on_line):
        self.asked.append(argv)
        for path in argv[3:]:
            if path in self.held:
                on_line(f"{path} {self.held[path]}")


@pytest.mark.parametrize(
    ("free_mb", "held", "ok", "stats"),
    [
        (9000.0, {}, True, 0),  # room for everything: nothing asked of the phone
        (None, {}, True, 0),  # free space unknown: nothing to hold it to
        (STORAGE_MARGIN_MB + 20, {}, False, 1),  # tight, nothing there: refused
        (STORAGE_MARGIN_MB + 20, {"model": 40 * 2**20}, True, 1),  # tight, the model there already: passes
    ],
)
def test_storage_asks_the_phone_what_is_there_only_when_it_is_tight(tmp_path, free_mb, held, ok, stats):
    runner = tmp_path / "upstream_main"
    runner.write_text("#!/system/bin/sh\n")
    need = Need(model_bytes=40 * 2**20, model_sha256="a" * 64, model_name="m.litertlm")
    model = str(PurePosixPath("/data/local/tmp/edgefarm/models") / ("a" * 16) / "m.litertlm")
    device = StatPhone(runner, {model if k == "model" else k: v for k, v in held.items()})
    checks = phone_checks(device, phone(free_storage_mb=free_mb), need, {})
    storage = next(c for c in checks if c.need == "storage")
    assert storage.ok is ok and len(device.asked) == stats, (storage, device.asked)
    assert ok or "needs" in storage.found
    assert ("there already" in storage.found) is bool(held)
