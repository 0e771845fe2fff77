from android_runner.thermal import thermal_snapshot


def test_hottest_zone_in_celsius_and_sentinels_dropped(tmp_path):
    for i, milli in enumerate(["48300", "61250", "-99900", "garbage"]):
        zone = tmp_path / f"thermal_zone{i}"
        zone.mkdir()
        (zone / "temp").write_text(milli + "\n")
    assert thermal_snapshot(str(tmp_path)) == {"max_temp_c": 61.2, "zones": 2}


def test_no_zones_is_none(tmp_path):
    assert thermal_snapshot(str(tmp_path)) is None
