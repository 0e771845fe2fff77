from android_runner import thermal
from android_runner.thermal import thermal_snapshot, with_clocks


def test_hottest_zone_in_celsius_and_sentinels_dropped(tmp_path):
    for i, milli in enumerate(["48300", "61250", "-99900", "garbage"]):
        zone = tmp_path / f"thermal_zone{i}"
        zone.mkdir()
        (zone / "temp").write_text(milli + "\n")
    assert thermal_snapshot(str(tmp_path)) == {"max_temp_c": 61.2, "zones": 2}


def test_no_zones_is_none(tmp_path):
    assert thermal_snapshot(str(tmp_path)) is None


def test_zones_and_tools_are_found_once_and_read_every_time(tmp_path):
    zone = tmp_path / "thermal_zone0"
    zone.mkdir()
    (zone / "temp").write_text("40000\n")
    cpu = tmp_path / "cpu" / "cpu0" / "cpufreq"
    cpu.mkdir(parents=True)
    (cpu / "scaling_cur_freq").write_text("1800000\n")
    assert thermal_snapshot(str(tmp_path)) == {"max_temp_c": 40.0, "zones": 1}
    assert with_clocks(None, str(tmp_path / "cpu")) == {"cpu_mhz": 1800.0}
    found = thermal._files.cache_info().misses, thermal._which.cache_info().misses
    (zone / "temp").write_text("55500\n")  # the same sensors, new values
    (cpu / "scaling_cur_freq").write_text("600000\n")
    assert thermal_snapshot(str(tmp_path)) == {"max_temp_c": 55.5, "zones": 1}
    assert with_clocks(None, str(tmp_path / "cpu")) == {"cpu_mhz": 600.0}
    assert (thermal._files.cache_info().misses, thermal._which.cache_info().misses) == found
