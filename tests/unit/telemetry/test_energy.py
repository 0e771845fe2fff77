"""Energy integration on current/voltage series in the phones' own units and signs.

The series in fixtures/power/ are driver.sh `power.tsv` files (centiseconds, raw current, raw
voltage, status) written in each vendor's convention; each expected value is worked out by hand
(trapezoid rule in SI units) independently of the module's unit detection.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest

from orchestrator.telemetry.energy import (
    PowerReading,
    current_scale_a,
    energy_fields,
    energy_of,
    energy_of_json,
    parse_power_tsv,
    reading_from_series,
    reading_to_json,
    voltage_scale_v,
)

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "power"


def _rows(name: str) -> list[tuple[float, float, float]]:
    out = []
    for line in (FIX / name).read_text().splitlines()[1:]:
        cs, i, v, _ = line.split("\t")
        out.append((int(cs) / 100.0, float(i), float(v)))
    return out


def _trapezoid_j(rows, amps_per_unit: float, volts_per_unit: float) -> float:
    total = 0.0
    for (t0, i0, v0), (t1, i1, v1) in pairwise(rows):
        p0 = abs(i0 * amps_per_unit) * v0 * volts_per_unit
        p1 = abs(i1 * amps_per_unit) * v1 * volts_per_unit
        total += (t1 - t0) * (p0 + p1) / 2
    return total


def test_pixel_discharge_negative_microamps():
    name = "pixel8_discharging_uA.tsv"
    e = energy_of(parse_power_tsv((FIX / name).read_text()))
    expected = _trapezoid_j(_rows(name), 1e-6, 1e-6)
    assert e.energy_j == pytest.approx(expected, rel=1e-9)
    assert 1.4 < e.mean_power_w < 1.8  # ~0.41 A at 3.87 V
    assert e.source == "sysfs:current_now" and e.unreliable == "" and e.samples == 12
    assert e.duration_s == pytest.approx(1.1)


def test_samsung_discharge_positive_milliamps_and_millivolts():
    name = "galaxy_s24_discharging_mA.tsv"
    e = energy_of(parse_power_tsv((FIX / name).read_text()))
    assert e.energy_j == pytest.approx(_trapezoid_j(_rows(name), 1e-3, 1e-3), rel=1e-9)
    assert 1.7 < e.mean_power_w < 2.1 and e.unreliable == ""


def test_same_draw_in_microamps_or_milliamps_and_either_sign_gives_the_same_joules():
    series_ua = [(0.0, -500000.0, 3900000.0), (1.0, -500000.0, 3900000.0)]
    series_ma = [(0.0, 500.0, 3900.0), (1.0, 500.0, 3900.0)]
    a = energy_of(reading_from_series(series_ua, source="x"))
    b = energy_of(reading_from_series(series_ma, source="x"))
    assert a.energy_j == pytest.approx(1.95) and b.energy_j == pytest.approx(1.95)
    assert current_scale_a(-450000) == 1e-6 and current_scale_a(450) == 1e-3
    assert (
        voltage_scale_v(3_900_000) == 1e-6 and voltage_scale_v(3900) == 1e-3 and voltage_scale_v(3.9) == 1.0
    )


def test_charging_is_measured_but_marked_unreliable():
    e = energy_of(parse_power_tsv((FIX / "redmi_charging_avg_uA.tsv").read_text()))
    assert e.source == "sysfs:current_avg"
    assert "charging" in e.unreliable and e.energy_j > 0


def test_a_current_that_changes_sign_is_unreliable():
    e = energy_of(parse_power_tsv((FIX / "pixel8_usb_load_mixed_sign.tsv").read_text()))
    assert "changed sign" in e.unreliable


def test_nothing_read_is_none_never_zero():
    assert parse_power_tsv("") is None
    assert parse_power_tsv("source current_now\n10\t-400000\t3900000\tDischarging\n") is None  # one reading
    assert energy_fields(None, 10) == {"energy_j": None, "energy_mj_per_token": None, "power_source": "",
                                       "energy_unreliable": ""}  # fmt: skip
    assert energy_of(PowerReading("iv", 5.0, 3, 1.0, "x", current_mean=0.0, voltage_mean=3.9e6)) is None


def test_native_runner_record_and_per_token():
    # as edgefarm_runner.c prints it: raw uA x uV x s, discharge negative (a Pixel)
    power = {"kind": "iv", "integral": -1.755e12 * 0.5, "n": 27, "dt_s": 0.5, "i_mean": -450000,
             "v_mean": 3900000, "pos": 0, "neg": 27, "charging": 0, "src": "sysfs:current_now"}  # fmt: skip
    f = energy_fields(power, 25)
    assert f["energy_j"] == pytest.approx(0.8775) and f["energy_mj_per_token"] == pytest.approx(35.1)
    assert f["power_source"] == "sysfs:current_now" and f["energy_unreliable"] == ""
    assert energy_fields(power, 0)["energy_mj_per_token"] is None  # no generated token: no per-token figure


def test_board_power_in_microwatt_seconds():
    e = energy_of_json({"kind": "p_uw", "integral": 6.2e6 * 2.0, "n": 20, "dt_s": 2.0, "src": "hwmon"})
    assert e.energy_j == pytest.approx(12.4) and e.mean_power_w == pytest.approx(6.2)


def test_reading_round_trips_through_the_row_record():
    r = parse_power_tsv((FIX / "pixel8_discharging_uA.tsv").read_text())
    assert energy_of_json(reading_to_json(r)).energy_j == pytest.approx(energy_of(r).energy_j)


def test_dumpsys_battery_fallback_where_sysfs_is_closed():
    from orchestrator.runners.android_snapshots import dumpsys_power

    android = FIX.parent / "android"
    s24 = (android / "battery_galaxy_s24.txt").read_text()  # current now: -412 (mA), voltage: 3912 (mV)
    e = energy_of(dumpsys_power({"battery_before": s24, "battery_after": s24}, 2000.0))
    assert e.energy_j == pytest.approx(0.412 * 3.912 * 2.0) and e.source == "dumpsys:current now"
    assert e.unreliable == ""
    pixel = (android / "battery_pixel8.txt").read_text()  # no current in it: not measured
    assert dumpsys_power({"battery_before": pixel, "battery_after": pixel}, 2000.0) is None
    assert dumpsys_power({"battery_before": s24}, 2000.0) is None  # one snapshot is not a series
