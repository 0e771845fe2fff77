"""The farm's records (orchestrator/farm/types.py): DeviceOutcome is outcome.json through its one
codec, adds up over a run's sessions (--resume), and reads a file of the wrong types without trusting it."""

from __future__ import annotations

from dataclasses import replace

from orchestrator.devices.types import PushStats
from orchestrator.farm.types import DeviceOutcome


def test_device_outcome_round_trips_and_sums_over_sessions():
    first = DeviceOutcome(name="p", kind="adb", model_loads=2, wall_s=10.0, model_push=PushStats(1, 100),
                          notes=["warning: hot"], runner={"runner": "native"}, error="lost", error_code=3)  # fmt: skip
    again = DeviceOutcome.from_dict(first.to_dict())
    assert again == first and "stand_in" not in first.to_dict()
    resumed = DeviceOutcome(name="p", kind="adb", wall_s=1.5, model_push=PushStats(0, 0, 1, 100)).after(again)
    assert (resumed.model_loads, resumed.wall_s, resumed.sessions) == (2, 11.5, 2)
    assert resumed.model_push == PushStats(1, 100, 1, 100) and resumed.error == ""


def test_an_outcome_json_with_wrong_types_is_read_without_trusting_them():
    data = replace(DeviceOutcome(name="p", kind="adb"), model_loads=1).to_dict()
    data.update(model_loads="7", wall_s=True, notes=["ok", 3], model_push={"bytes_sent": "x", "files": 2})
    got = DeviceOutcome.from_dict(data)
    assert (got.model_loads, got.wall_s, got.notes, got.model_push) == (0, None, ["ok"], PushStats(files=2))
