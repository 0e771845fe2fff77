"""The Android device lab: emulated phones behind two private REAL adb servers.

Server A (farm host 1) holds a "Pixel 8" and a "Galaxy S24"; server B (farm host 2) holds a
"Redmi Note 13". Tests that need an unauthorized or vanishing phone add their own with
`lab.add_phone(...)`. Missing bwrap or adb is a FAILURE, never a skip: a lab that silently
does not run proves nothing.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from android_runner.native import settings_header
from android_runner.native.build import SOURCES, build_host

from .gauge import Gauge, GaugeBank, GaugeSpec, TemperatureScript, ThermalSpec
from .phone import FakePhone
from .sandbox import GALAXY_S24, LAB_ETC, PIXEL_8, REDMI_NOTE_13, PhoneSpec, build_phone_root, bwrap_argv
from .server import AdbServer, adb_binary

HERE = Path(__file__).resolve().parent
FAKE_MAIN = HERE / "fake_litert_lm_advanced_main.py"


def _require_tools() -> None:
    if not shutil.which("bwrap"):
        pytest.fail("bubblewrap (bwrap) is missing: `apt-get install bubblewrap`; the adb lab needs it")
    try:
        adb_binary()
    except RuntimeError as e:
        pytest.fail(str(e))


_NATIVE_BUILDS: dict[str, tuple[Path, Path]] = {}  # source hash -> (runner, library), this session


def _native_source_key() -> str:
    digest = hashlib.sha256()
    for f in (*SOURCES, *sorted(SOURCES[0].parent.glob("*.h"))):
        digest.update(f.read_bytes())
    digest.update(settings_header.render().encode())  # generated from android_runner/settings.py
    return digest.hexdigest()


@dataclass
class Lab:
    tmp: Path
    servers: list[AdbServer]
    phones: dict[str, FakePhone] = field(default_factory=dict)
    serials: dict[str, str] = field(default_factory=dict)
    owner: dict[str, int] = field(default_factory=dict)  # serial -> server index

    def add_phone(
        self,
        label: str,
        spec: PhoneSpec,
        *,
        server: int = 0,
        unauthorized: bool = False,
        connect: bool = True,
    ) -> FakePhone:
        root = build_phone_root(self.tmp / "phones" / label, spec)
        phone = FakePhone(
            label,
            spec.props,
            root=root,
            sandbox_argv=lambda cmd, root=root: bwrap_argv(root, cmd),
            unauthorized=unauthorized,
        ).start()
        self.phones[label] = phone
        if connect:
            state = "unauthorized" if unauthorized else "device"
            serial = self.servers[server].connect(phone, state=state)
            self.serials[label] = serial
            self.owner[serial] = server
        return phone

    def remove_phone(self, label: str) -> None:
        phone = self.phones.pop(label)
        serial = self.serials.pop(label, None)
        phone.vanish()
        if serial:
            server = self.servers[self.owner.pop(serial)]
            server.adb("disconnect", serial)

    def come_back(self, label: str) -> None:
        """Plug a vanished phone back in: same port, so the same serial (and name), same /data.
        Idempotent: a phone that is attached is left as it is."""
        phone, serial = self.phones[label], self.serials[label]
        if phone.vanished:
            phone.start()
        self.servers[self.owner[serial]].connect(phone, timeout_s=30)

    @contextmanager
    def gauges(
        self, specs: Mapping[str, GaugeSpec], thermal: Mapping[str, ThermalSpec] | None = None
    ) -> Iterator[GaugeBank]:
        """Give these phones live fuel gauges that follow their CPU use (tests/lab/adb/gauge.py) for the
        block (and `thermal` ones a temperature and a clock that follow it); their battery folder,
        `dumpsys battery`/`thermalservice` and clock are restored afterwards."""
        bank = GaugeBank()
        saved: dict[str, tuple[dict[Path, str], str]] = {}
        kept: dict[str, dict[Path, str]] = {}
        for label, spec in specs.items():
            root = self.phones[label].root
            battery, dumpsys = root / "power_supply" / "battery", root / LAB_ETC.lstrip("/") / "battery.txt"
            etc = root / LAB_ETC.lstrip("/")
            cpufreq = root / "cpufreq" / "policy0" / "scaling_cur_freq"
            saved[label] = ({p: p.read_text() for p in battery.iterdir()}, dumpsys.read_text())
            kept[label] = {p: p.read_text() for p in (etc / "thermal.txt", cpufreq, cpufreq.with_name("scaling_max_freq"))}
            for p in battery.iterdir():
                p.unlink()
            phone = self.phones[label]
            heat = (thermal or {}).get(label)
            bank.gauges[label] = Gauge(spec, battery, dumpsys, lambda phone=phone: set(phone.sessions), heat,
                                       etc / "thermal.txt" if heat else None, cpufreq if heat else None)  # fmt: skip
        bank.start()
        try:
            yield bank
        finally:
            bank.stop()
            for label, (files, dumpsys_text) in saved.items():
                root = self.phones[label].root
                battery = root / "power_supply" / "battery"
                for p in battery.iterdir():
                    p.unlink()
                for p, text in files.items():
                    p.write_text(text)
                (root / LAB_ETC.lstrip("/") / "battery.txt").write_text(dumpsys_text)
                for p, text in kept[label].items():
                    p.write_text(text)

    @contextmanager
    def temperature(self, label: str, curve, start_when=lambda: True) -> Iterator[TemperatureScript]:
        """The phone's temperatures follow `curve` for the block (tests/lab/adb/gauge.py TemperatureScript);
        its `dumpsys battery` and `thermalservice` texts are restored afterwards."""
        etc = self.phones[label].root / LAB_ETC.lstrip("/")
        with TemperatureScript(curve, etc / "battery.txt", etc / "thermal.txt", start_when) as script:
            yield script

    @property
    def server_addrs(self) -> list[tuple[str, int]]:
        return [("127.0.0.1", s.port) for s in self.servers]

    def env(self, **extra: str) -> dict[str, str]:
        """Environment for an `edgefarm` subprocess whose local adb server is lab server A; phones
        get the native runner built for this host (EDGEFARM_PHONE_RUNNER=upstream picks the stand-in)."""
        runner, lib = self.native_runner()
        env = dict(
            os.environ,
            ANDROID_ADB_SERVER_PORT=str(self.servers[0].port),
            EDGEFARM_NATIVE_RUNNER=str(runner),
            EDGEFARM_RUNTIME_LIB=str(lib),
            EDGEFARM_ANDROID_RUNNER=str(self.runner_wrapper()),
        )
        env.update(extra)
        env.pop("ANDROID_ADB_SERVER_HOST", None)
        return env

    def native_runner(self) -> tuple[Path, Path]:
        """edgefarm's native runner built with the host compiler against the installed wheel's
        liblitert-lm.so (the phone build uses the NDK and the android wheel: same source). Built once
        per test session and source hash, whichever lab asks first (the labs only read it)."""
        key = _native_source_key()
        if key not in _NATIVE_BUILDS:
            folder = self.tmp / "native"
            build_host(folder)
            _NATIVE_BUILDS[key] = (folder / "edgefarm_runner", folder / "liblitert-lm.so")
        return _NATIVE_BUILDS[key]

    def device_root(self, label: str) -> Path:
        """The host folder that is the phone's /data."""
        return self.phones[label].root / "data"

    def runner_wrapper(self) -> Path:
        """ONE executable file the driver execs like the upstream binary: a sh/Python polyglot
        whose first statement is `exec python3 "$0" "$@"` to sh and a no-op string to Python."""
        path = self.tmp / "bin" / "litert_lm_advanced_main"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            head = f'#!/system/bin/sh\n"exec" "{sys.executable}" "$0" "$@"\n'
            path.write_text(head + FAKE_MAIN.read_text())
            path.chmod(0o755)
        return path


@contextmanager
def running_lab(tmp: Path, phones: Sequence[tuple[str, PhoneSpec, int]], hosts: int = 2) -> Iterator[Lab]:
    """`hosts` farm hosts (adb servers) with these phones (label, spec, index of its server), stopped and
    removed after: the suite's lab and the benchmark scripts' (scripts/bench_*.py) own."""
    lab = Lab(tmp=tmp, servers=[AdbServer(tmp / f"host{i}").start() for i in range(hosts)])
    try:
        for label, spec, server in phones:
            lab.add_phone(label, spec, server=server)
        yield lab
    finally:
        for phone in list(lab.phones.values()):
            phone.vanish()
        for server in lab.servers:
            server.stop()


def open_adb_lab(tmp_path_factory):
    """Two farm hosts (adb servers) and three phones: the generator behind the session fixture
    `adb_lab` (tests/lab/conftest.py), so every lab suite shares ONE lab."""
    _require_tools()
    # No global ANDROID_ADB_SERVER_PORT: other lab suites in this session must not see these phones.
    # Tests hand the lab's ports over explicitly (lab.env for subprocesses, server_addrs for calls).
    phones = [("pixel8", PIXEL_8, 0), ("s24", GALAXY_S24, 0), ("redmi", REDMI_NOTE_13, 1)]
    with running_lab(tmp_path_factory.mktemp("adb-lab"), phones) as lab:
        yield lab
