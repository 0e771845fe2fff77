"""A served device's run lock (serve/hold.py) on this host's real lock folder (devices/lock.py): taken once
for all the device's units, refusing while a run holds it and holding a run off while served, given back
at the end."""

from __future__ import annotations

import pytest

from orchestrator.devices.local import LocalDevice
from orchestrator.devices.lock import DeviceBusy, held
from orchestrator.serve.hold import DeviceHold


def test_a_served_device_refuses_a_run_until_the_server_gives_it_back(tmp_path):
    device = LocalDevice(workdir=tmp_path / "w")
    hold = DeviceHold(device, "20261205-000000-serve")
    hold.take()
    hold.take()  # a sibling unit staging later: already held, nothing taken twice
    with (
        pytest.raises(DeviceBusy, match="in use by run 20261205-000000-serve"),
        held(device, "20261205-000001-run"),
    ):
        pass
    hold.release()
    hold.release()  # once only
    with held(device, "20261205-000001-run") as note:
        assert note == ""


def test_a_device_a_run_holds_is_refused_to_the_server_and_taken_once_the_run_ends(tmp_path):
    device = LocalDevice(workdir=tmp_path / "w")
    hold = DeviceHold(device, "20261205-000002-serve")
    with (
        held(device, "20261205-000003-run"),
        pytest.raises(DeviceBusy, match="in use by run 20261205-000003-run"),
    ):
        hold.take()  # the engine is down with this reason, and tries again (engine.RETRY_S)
    hold.take()
    assert (tmp_path / "w" / "run.lock").is_dir()
    hold.release()
    assert not (tmp_path / "w" / "run.lock").exists()
