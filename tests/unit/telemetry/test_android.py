"""Android telemetry parsers on captured-style output, vendor quirks included."""

from pathlib import Path

from android_runner.memory import parse_status
from orchestrator.telemetry.android import (
    parse_battery,
    parse_df_free_mb,
    parse_getprop,
    parse_meminfo,
    parse_thermal,
    ram_mb,
    soc_from_props,
)

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "android"


def read(name: str) -> str:
    return (FIX / name).read_text()


def test_getprop_reads_values_including_multiline_ones():
    props = parse_getprop(read("getprop_pixel8.txt"))
    assert props["ro.product.model"] == "Pixel 8"
    assert props["ro.build.version.sdk"] == "34"
    assert props["persist.sys.motd"] == "first line\nsecond line"


def test_soc_comes_from_whichever_key_the_vendor_fills():
    assert soc_from_props(parse_getprop(read("getprop_pixel8.txt"))) == "Google Tensor G3"
    # Samsung leaves ro.soc.model empty: fall back to the board platform.
    assert soc_from_props(parse_getprop(read("getprop_galaxy_s24.txt"))) == "s5e9945"
    # MediaTek: the vendor key beats the board code name.
    assert soc_from_props(parse_getprop(read("getprop_redmi_note13.txt"))) == "MT6789"
    assert soc_from_props({}) == ""


def test_battery_plain():
    b = parse_battery(read("battery_pixel8.txt"))
    assert b.level_pct == 87
    assert b.temperature_c == 29.1
    assert b.charging is True
    assert b.plugged == "usb"
    assert b.voltage_mv == 4297


def test_battery_samsung_quirks_keep_the_first_value_of_duplicate_keys():
    b = parse_battery(read("battery_galaxy_s24.txt"))
    assert b.level_pct == 64  # not the later "Level: 100"
    assert b.temperature_c == 33.4  # not "Temperature: 250"
    assert b.charging is False
    assert b.plugged == ""


def test_battery_scale_and_missing_fields():
    b = parse_battery(read("battery_minimal.txt"))
    assert b.level_pct == 100.0
    assert b.temperature_c is None
    assert b.charging is True and b.plugged == "ac"
    assert parse_battery("") == parse_battery("garbage without fields")


def test_thermal_reads_live_hal_section_not_cached():
    t = parse_thermal(read("thermal_pixel8.txt"))
    assert t.status == 1 and t.status_name == "light"
    assert t.hal_ready is True
    assert "cpu0" not in t.temperatures_c  # cached only
    assert t.temperatures_c["BIG"] == 36.75
    assert "TPU" not in t.temperatures_c  # -99.9 = missing sensor
    assert "vdroop1" not in t.temperatures_c and "ocp_cpu1" not in t.temperatures_c  # BCL
    assert t.max_temp_c == 36.75


def test_thermal_space_indent_and_hal_not_ready():
    t = parse_thermal(read("thermal_galaxy_s24.txt"))
    assert t.status == 0 and t.hal_ready is False
    assert t.temperatures_c == {"battery": 33.4, "skin": 31.0, "cpu": 38.2}
    assert parse_thermal("").status is None


def test_meminfo_with_vendor_fields():
    m = parse_meminfo(read("meminfo_pixel8.txt"))
    assert m["MemTotal"] == 7812544 and m["ION_heap"] == 181704 and m["Active(anon)"] == 1389180
    assert ram_mb(m) == 7629.4
    assert ram_mb({}) is None


def test_proc_status_ignores_overflowed_fields():
    """The one /proc/<pid>/status parser, the runner's (android_runner/memory.py), in MB."""
    s = parse_status(read("status_runner.txt"))
    assert s["VmHWM"] == 1834256 / 1024 and s["VmRSS"] == 1702400 / 1024 and s["VmSwap"] == 204800 / 1024
    assert s["RssAnon"] == 612300 / 1024 and s["RssFile"] == 1090100 / 1024
    assert "VmRSS" not in parse_status("VmRSS:\t18446744073709551615 kB")


def test_df_toybox_and_old_toolbox():
    assert parse_df_free_mb(read("df_toybox.txt")) == round(54887412 / 1024, 1)
    assert parse_df_free_mb(read("df_toolbox.txt")) == 6963.2
    wrapped = "Filesystem 1K-blocks Used Available Use% Mounted on\n/dev/block/very/long/name\n 100 50 2048 50% /data\n"
    assert parse_df_free_mb(wrapped) == 2.0
    assert parse_df_free_mb("df: /nope: No such file") is None
