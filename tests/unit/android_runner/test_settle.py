"""--settle on boards and this host (android_runner/thermal.py settle over /sys/class/thermal zones):
the record the Python runner puts on the block's first row."""

from __future__ import annotations

import math
from pathlib import Path

from android_runner.contract import SampleResult, Settle
from android_runner.thermal import _files, settle, zone_temps


class Zones:
    """Two sysfs thermal zones (millidegrees in `temp`, the name in `type`) that follow a curve of the
    clock the gate sleeps on."""

    def __init__(self, root: Path, curve) -> None:
        self.root, self.curve, self.now = root, curve, 0.0
        for i, name in enumerate(("cpu-thermal", "skin")):
            (root / f"thermal_zone{i}").mkdir(parents=True)
            (root / f"thermal_zone{i}" / "type").write_text(name + "\n")
        self.sleep(0.0)
        _files.cache_clear()

    def sleep(self, s: float) -> None:
        self.now += s
        for i in range(2):
            (self.root / f"thermal_zone{i}" / "temp").write_text(f"{round(self.curve(self.now) * 1000) + i}\n")

    def read(self) -> dict[str, float]:
        return zone_temps(str(self.root))


def test_a_cooling_board_settles_and_the_record_says_so(tmp_path):
    z = Zones(tmp_path, lambda t: 30.0 + 20.0 * math.exp(-t / 5.0))
    got = Settle.from_dict(settle(0.5, 10.0, 120.0, read=z.read, sleep=z.sleep, clock=lambda: z.now))
    assert got.settled is True and 10.0 <= got.waited_s < 60.0 and got.span_c < 0.5
    assert got.start_c == {"cpu-thermal": 50.0, "skin": 50.001} and got.end_c["cpu-thermal"] < 31.0
    row = SampleResult("a", "ok", settle=got)  # the row's codec keeps it
    assert SampleResult.from_json(row.to_json()).settle == got


def test_a_board_that_keeps_warming_is_measured_at_the_longest_wait(tmp_path):
    z = Zones(tmp_path, lambda t: 30.0 + 0.5 * t)
    got = settle(2.0, 10.0, 30.0, read=z.read, sleep=z.sleep, clock=lambda: z.now)
    assert got["settled"] is False and got["waited_s"] >= 30.0 and got["span_c"] >= 2.0


def test_no_sensor_gates_nothing(tmp_path):
    got = settle(2.0, 60.0, 600.0, read=dict, sleep=lambda s: None, clock=lambda: 0.0)
    assert got["settled"] is None and got["waited_s"] == 0.0
