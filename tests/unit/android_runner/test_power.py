"""Board power readers (android_runner/power.py): a Pi 5's PMIC rails, hwmon inputs, the sampler's
integral. The PMIC text is in `vcgencmd pmic_read_adc`'s format (rail_A current(n)=xA, rail_V
volt(n)=xV) with representative values, not a capture from our own board."""

import time
from pathlib import Path

import pytest

from android_runner.power import PowerSampler, find_power_reader, hwmon_files, parse_pmic_adc

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "boards"


def test_pmic_rails_with_current_and_voltage_are_summed():
    text = (FIX / "pmic_read_adc_pi5.txt").read_text()
    amps = {"3V7_WL_SW": 0.00878340, "3V3_SYS": 0.04880080, "1V8_SYS": 0.18250770, "DDR_VDD2": 0.03220788,
            "DDR_VDDQ": 0.0, "1V1_SYS": 0.18640800, "0V8_SYS": 0.32498520, "VDD_CORE": 0.71580000,
            "3V3_DAC": 0.0, "3V3_ADC": 0.00030012, "0V8_AON": 0.00481230, "HDMI": 0.02150760}  # fmt: skip
    volts = {"3V7_WL_SW": 3.692628, "3V3_SYS": 3.301464, "1V8_SYS": 1.800494, "DDR_VDD2": 1.110622,
             "DDR_VDDQ": 0.6057503, "1V1_SYS": 1.105954, "0V8_SYS": 0.8001771, "VDD_CORE": 0.7207738,
             "3V3_DAC": 3.309036, "3V3_ADC": 3.302803, "0V8_AON": 0.8, "HDMI": 5.1452}  # fmt: skip
    want_uw = sum(amps[k] * volts[k] for k in amps) * 1e6  # EXT5V_V and BATT_V have no current: left out
    assert parse_pmic_adc(text) == pytest.approx(want_uw)
    assert parse_pmic_adc("") is None and parse_pmic_adc('error=1 error_msg="Command not registered"') is None


def test_hwmon_power_inputs_and_no_sensor(tmp_path):
    (tmp_path / "hwmon0").mkdir()
    (tmp_path / "hwmon0" / "power1_input").write_text("1500000\n")
    (tmp_path / "hwmon1").mkdir()
    (tmp_path / "hwmon1" / "temp1_input").write_text("41000\n")
    assert hwmon_files(str(tmp_path)) == [str(tmp_path / "hwmon0" / "power1_input")]
    source, read, interval = find_power_reader(str(tmp_path))
    assert source == "hwmon" and read() == 1_500_000 and interval == 0.02
    empty = tmp_path / "none"
    empty.mkdir()
    assert hwmon_files(str(empty)) == []


def test_sampler_integrates_a_constant_draw():
    sampler = PowerSampler("hwmon", lambda: 2_000_000.0, 0.01)  # 2 W
    sampler.start()
    try:
        sampler.reset()
        time.sleep(0.2)
        rec = sampler.reading()
        time.sleep(0.05)
        again = sampler.reading()
    finally:
        sampler.stop()
    assert rec["kind"] == "p_uw" and rec["n"] >= 3
    assert rec["integral"] / rec["dt_s"] == pytest.approx(2_000_000.0, rel=1e-4)  # dt_s is rounded to 1 us
    assert again == rec  # closed: nothing is added until the next reset
