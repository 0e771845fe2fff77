"""The farm tells the host's waiting work to start only once no device is being staged any more."""

import io
import threading
import time
from pathlib import Path

from rich.console import Console

from orchestrator import farm
from orchestrator.jobs import JobOptions
from orchestrator.runners.base import RunOptions
from orchestrator.session import DeviceOutcome


class _Device:
    kind = "local"

    def __init__(self, name: str) -> None:
        self.name = name


def test_on_staged_waits_for_the_slowest_device_to_finish_staging(tmp_path: Path, monkeypatch):
    release = threading.Event()
    seen: list[tuple[str, float]] = []

    def fake_session(device, dataset, samples, model, opts, job_opts, dev_dir, progress, **kw):
        progress.phase = "staging"
        if device.name == "slow":
            release.wait(10)
        seen.append((f"{device.name} staged", time.monotonic()))
        progress.phase = "running"
        time.sleep(0.3)
        progress.phase = "done"
        return DeviceOutcome(name=device.name, kind="local")

    monkeypatch.setattr(farm, "run_device", fake_session)
    threading.Timer(0.4, release.set).start()
    devices = [_Device("fast"), _Device("slow")]
    outcomes = farm.run_farm(
        devices, None, [], None, {d.name: RunOptions(run_id="r") for d in devices}, JobOptions(), tmp_path,
        Console(file=io.StringIO()), score=None,
        on_staged=lambda: seen.append(("on_staged", time.monotonic())),
    )  # fmt: skip
    assert [o.name for o in outcomes] == ["fast", "slow"]
    order = [what for what, _ in sorted(seen, key=lambda x: x[1])]
    assert order.index("on_staged") > order.index("slow staged") and order.count("on_staged") == 1
