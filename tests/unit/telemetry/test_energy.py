"""Energy from phones' fuel gauges and boards' sensors: units decided once per phone, the gauge's lag,
external power and short samples flagged, the pass's energy from the coulomb counter.

The gauge simulated here (`_gauge_series`) is written independently of the module: a load that steps
at known times, a gauge that publishes the mean over its last period every P seconds, read every
20 ms like the native runner; the exact energy is the load's integral worked out in the test.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise
from pathlib import Path

import pytest

from android_runner.contract import SampleResult
from orchestrator.runners.android_snapshots import dumpsys_power
from orchestrator.telemetry.energy import (
    MA,
    UA,
    Gauge,
    PowerReading,
    energy_fields,
    energy_of,
    energy_trusted,
    parse_power_tsv,
    phone_gauge,
    reading_from_json,
    reading_from_series,
    reading_to_json,
    settle,
    voltage_scale_v,
    with_battery,
)
from orchestrator.telemetry.pass_energy import pass_energy

FIX = Path(__file__).resolve().parents[1] / "fixtures"
V = 3.9  # volts


def _load(t: float, s: float, e: float, idle: float, busy: float) -> float:
    return busy if s <= t < e else idle


def _gauge_series(s, e, *, period, idle=0.3, busy=1.5, phase=0.07, unit=UA, sign=-1, tick=0.02):
    """(t, raw current, raw voltage) as a runner reads a gauge publishing the mean over its last period."""
    dt = 0.001

    def mean(a, b):
        n = max(1, round((b - a) / dt))
        return sum(_load(a + (k + 0.5) * (b - a) / n, s, e, idle, busy) for k in range(n)) / n

    refresh = phase - period  # the gauge's refresh instants: phase + k * period
    out, t = [], s
    while t <= e + 1e-9:
        k = int((t - phase) // period)
        last = phase + k * period
        amps = mean(last - period, last) if last > refresh else idle
        out.append((round(t, 6), sign * amps / unit, V * 1e6))
        t += tick
    return out


@pytest.mark.parametrize("period", [0.25, 0.5, 1.0])
def test_lag_correction_is_exact_for_a_step_load_of_two_periods_or_more(period):
    s, e = 10.0, 10.0 + 2.3 * period
    series = _gauge_series(s, e, period=period)
    r = reading_from_series(series, source="sysfs:current_now")
    exact = 1.5 * V * (series[-1][0] - series[0][0])  # the load over the runner's window
    corrected = energy_of(r, Gauge(period_s=period)).energy_j
    plain = abs(r.integral) * 1e-6 * 1e-6
    assert corrected == pytest.approx(exact, rel=0.02)
    assert abs(plain - exact) / exact > 0.2  # what integrating the lagging readings alone gives


def test_period_is_measured_from_the_distinct_readings_and_short_samples_are_flagged():
    long = reading_from_series(_gauge_series(0.0, 2.0, period=0.25), source="sysfs:current_now")
    short = reading_from_series(_gauge_series(5.0, 5.3, period=0.25), source="sysfs:current_now")
    g = phone_gauge([long, short])
    assert g.period_s == pytest.approx(0.25, abs=0.03)
    assert energy_of(long, g).unreliable == ""
    assert "shorter than two gauge updates" in energy_of(short, g).unreliable
    only_short = phone_gauge([reading_from_series(_gauge_series(5.0, 5.05, period=0.25), source="x")])
    assert only_short.period_s is None
    assert "period unknown" in energy_of(short, only_short).unreliable


def _row(i: int, power: dict | None, tokens: int = 10) -> SampleResult:
    return SampleResult(id=f"s{i}", status="ok", decode_tokens=tokens, power=power)


def _phone_rows(unit: float, sign: int, *, counter: bool, amps: float = 1.5, n: int = 4):
    """n back-to-back 2 s samples of a steady load, with the coulomb counter around each (uAh)."""
    rows, cc = [], 3_000_000.0
    for i in range(n):
        t0 = 10.0 + i * 2.1
        series = [(t0 + k * 0.02, sign * amps / unit + (k % 2), V * 1e3) for k in range(101)]
        rec = reading_to_json(reading_from_series(series, source="sysfs:current_now"))
        rec["t0"] = t0
        if counter:
            rec.update(cc0=cc, cc1=cc - amps * 2.0 / 3600 * 1e6)
        cc -= amps * 2.1 / 3600 * 1e6
        rows.append(_row(i, rec))
    return rows


def test_milliamps_only_when_the_charge_counter_proves_it_never_from_one_samples_magnitude():
    ma = settle(_phone_rows(MA, +1, counter=True))
    assert all(r.energy_j == pytest.approx(1.5 * V * 2.0, rel=0.01) and energy_trusted(r) for r in ma)
    ua = settle(_phone_rows(UA, -1, counter=True))
    assert all(r.energy_j == pytest.approx(1.5 * V * 2.0, rel=0.01) and energy_trusted(r) for r in ua)
    assert "confirmed by the charge counter" in phone_gauge([reading_from_json(r.power) for r in ua]).unit_why
    # a mA gauge without a counter is read by the ABI (uA): far too small to be the load, so flagged
    blind = settle(_phone_rows(MA, +1, counter=False))
    assert all("too small to be the load" in r.energy_unreliable and not energy_trusted(r) for r in blind)


def test_usb_bypass_5_milliamps_is_not_read_as_5_amps_and_is_flagged():
    """`Not charging` with USB powered: the battery supplies ~5 mA (5000 uA) while the charger runs the
    phone. The old magnitude rule read 5000 as mA (5 A, ~20 W)."""
    rows = _phone_rows(UA, -1, counter=True, amps=0.005)
    bypass = (FIX / "android" / "battery_pixel8.txt").read_text()  # captured on USB: `USB powered: true`
    bypass = bypass.replace("status: 2", "status: 4")  # BATTERY_STATUS_NOT_CHARGING
    rows = [replace(r, power=with_battery(r.power, bypass, bypass)) for r in rows]
    for r in settle(rows):
        assert r.energy_j < 0.1 and not energy_trusted(r)  # 0.005 A x 3.9 V x 2 s = 0.039 J, not 39 J
        assert "external power (status Not charging, usb powered" in r.energy_unreliable
        assert "too small to be the load" in r.energy_unreliable


def test_charging_and_sign_changes_are_flagged():
    e = energy_of(parse_power_tsv((FIX / "power" / "redmi_charging_avg_uA.tsv").read_text()))
    assert e.source == "sysfs:current_avg" and "external power (status Charging)" in e.unreliable
    e = energy_of(parse_power_tsv((FIX / "power" / "pixel8_usb_load_mixed_sign.tsv").read_text()))
    assert "changed sign" in e.unreliable and "Not charging" in e.unreliable


def test_vendor_fixtures_integrate_as_the_trapezoid_rule_when_the_gauge_is_instantaneous():
    for name, scale in (("pixel8_discharging_uA.tsv", 1e-6), ("galaxy_s24_discharging_mA.tsv", 1e-3)):
        text = (FIX / "power" / name).read_text()
        rows = [ln.split("\t") for ln in text.splitlines()[1:]]
        pts = [(int(c) / 100, abs(float(i)) * scale * float(v) * scale) for c, i, v, _ in rows]
        expected = sum((t1 - t0) * (p0 + p1) / 2 for (t0, p0), (t1, p1) in pairwise(pts))
        r = parse_power_tsv(text)
        e = energy_of(r, Gauge(amps_per_unit=scale, period_s=None))
        assert e.energy_j == pytest.approx(expected, rel=1e-9) and "period unknown" in e.unreliable


def test_voltage_units_and_nothing_read_is_none_never_zero():
    assert (
        voltage_scale_v(3_900_000) == 1e-6 and voltage_scale_v(3900) == 1e-3 and voltage_scale_v(3.9) == 1.0
    )
    assert parse_power_tsv("") is None
    assert parse_power_tsv("source current_now\n10\t-400000\t3900000\tDischarging\n") is None
    assert energy_fields(None, 10) == {"energy_j": None, "energy_mj_per_token": None, "power_source": "",
                                       "energy_unreliable": ""}  # fmt: skip
    assert energy_of(PowerReading("iv", 5.0, 3, 1.0, "x", current_mean=0.0, voltage_mean=3.9e6)) is None


def test_native_runner_record_round_trip_and_per_token():
    power = {"kind": "iv", "integral": -1.755e12 * 2.0, "n": 101, "dt_s": 2.0, "i_mean": -450000,
             "v_mean": 3900000, "pos": 0, "neg": 101, "charging": 0, "src": "sysfs:current_now",
             "i0": -450000, "v0": 3900000, "i1": -450000, "v1": 3900000, "changes": 8, "t_ch0": 0.1,
             "t_ch1": 1.85, "t0": 100.0}  # fmt: skip
    f = energy_fields(power, 25, Gauge(period_s=0.25))
    assert f["energy_j"] == pytest.approx(3.51) and f["energy_mj_per_token"] == pytest.approx(140.4)
    assert f["energy_unreliable"] == ""
    r = reading_from_json(power)
    assert r.changes == 8 and r.change_span_s == pytest.approx(1.75) and r.first == r.last
    assert reading_from_json(reading_to_json(r)) == r


def test_board_power_in_microwatt_seconds_needs_no_gauge():
    f = energy_fields({"kind": "p_uw", "integral": 6.2e6 * 2.0, "n": 20, "dt_s": 2.0, "src": "hwmon"}, 4)
    assert f["energy_j"] == pytest.approx(12.4) and f["energy_unreliable"] == ""


def test_dumpsys_only_gauge_uses_the_last_reading_and_is_flagged_without_a_period():
    s24 = (FIX / "android" / "battery_galaxy_s24.txt").read_text()  # current now: -412 (mA), voltage: 3912
    r = dumpsys_power({"battery_before": s24, "battery_after": s24}, 2000.0)
    assert r.source == "dumpsys:current now"
    g = Gauge(amps_per_unit=MA)
    e = energy_of(r, g)
    assert e.energy_j == pytest.approx(0.412 * 3.912 * 2.0) and "period unknown" in e.unreliable
    pixel = (FIX / "android" / "battery_pixel8.txt").read_text()  # no current in it: not measured
    assert dumpsys_power({"battery_before": pixel, "battery_after": pixel}, 2000.0) is None


def test_pass_energy_from_the_coulomb_counter():
    rows = settle(_phone_rows(UA, -1, counter=True))
    p = pass_energy(rows)
    # counter drop: 3 gaps of 2.1 s + the last 2.0 s at 1.5 A; span 8.3 s
    assert p.span_s == pytest.approx(8.3)
    assert p.energy_j == pytest.approx(1.5 * 8.3 * V, rel=0.02)
    assert p.coverage == pytest.approx(8.0 / 8.3) and p.apportioned == ""
    assert pass_energy([_row(0, None)]) is None


def test_trusted_predicate():
    assert energy_trusted(SampleResult(id="a", status="ok", energy_j=1.0))
    assert not energy_trusted(SampleResult(id="a", status="ok", energy_j=1.0, energy_unreliable="charging"))
    assert not energy_trusted(SampleResult(id="a", status="ok"))
