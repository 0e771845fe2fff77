"""Only temperature sensors count as temperatures: a Pixel's virtual sensors of unknown type (a battery
percentage, a power reading) and BCL entries never become the phone's hottest temperature."""

from pathlib import Path

from orchestrator.telemetry.android import parse_thermal

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "android"


def test_virtual_and_unknown_types_are_not_temperatures():
    t = parse_thermal((FIX / "thermal_pixel_virtual.txt").read_text())
    assert t.temperatures_c == {"battery": 31.2, "BIG": 38.4, "VIRTUAL-SKIN": 35.1}
    assert t.max_temp_c == 38.4  # not 92.0 (a percentage) nor 64.5 (watts) nor 87.0 (BCL percent)


def test_the_pixel_8_capture_keeps_its_real_sensors():
    t = parse_thermal((FIX / "thermal_pixel8.txt").read_text())
    assert t.temperatures_c == {"battery": 29.1, "BIG": 36.75, "G3D": 34.5, "VIRTUAL-SKIN": 33.2}
