"""Phones without a devices.yaml entry are named as people know them, uniquely and the same on every run."""

from orchestrator.devices.adb_discovery import known_name, unique_names


def test_the_marketing_name_wins_then_the_vendor_one_then_manufacturer_and_model():
    redmi = {"ro.product.marketname": "Redmi Note 13", "ro.product.vendor.marketname": "Redmi Note 13 4G",
             "ro.product.manufacturer": "Xiaomi", "ro.product.model": "23021RAAEG"}  # fmt: skip
    assert known_name(redmi) == "redmi-note-13"
    assert known_name({**redmi, "ro.product.marketname": ""}) == "redmi-note-13-4g"
    assert known_name({**redmi, "ro.product.marketname": " ", "ro.product.vendor.marketname": ""}) == (
        "xiaomi-23021raaeg"
    )
    assert (
        known_name({"ro.product.manufacturer": "Google", "ro.product.model": "Pixel 8"}) == "google-pixel-8"
    )
    assert (
        known_name({"ro.product.manufacturer": "samsung", "ro.product.model": "SM-S921B"})
        == "samsung-sm-s921b"
    )
    # a model that already carries its maker's name is not doubled
    assert known_name({"ro.product.manufacturer": "Xiaomi", "ro.product.model": "Xiaomi 14"}) == "xiaomi-14"
    # the phone did not answer (unauthorized): the adb listing's model, else "phone"
    assert known_name({}, "Pixel 8") == "pixel-8" and known_name({}, "") == "phone"


def test_identical_phones_all_get_their_serial_tail_whatever_the_listing_order():
    bases = {
        "R5CX10ABCDE": "samsung-sm-s921b",
        "127.0.0.1:45678": "google-pixel-8",
        "R5CX20FGHIJ": "samsung-sm-s921b",
    }
    names = unique_names(bases, taken=set())
    assert names == {"R5CX10ABCDE": "samsung-sm-s921b-x10abcde", "127.0.0.1:45678": "google-pixel-8",
                     "R5CX20FGHIJ": "samsung-sm-s921b-x20fghij"}  # fmt: skip
    assert unique_names(dict(reversed(list(bases.items()))), taken=set()) == names  # order does not matter
    # a devices.yaml name is never taken by a discovered phone
    assert unique_names({"ZY22": "google-pixel-8"}, taken={"google-pixel-8"}) == {
        "ZY22": "google-pixel-8-zy22"
    }


def test_names_from_captured_getprop_output():
    """A phone is named from its whole `getprop` as `info()` parses it (a missing property is simply
    absent, whatever the phone prints for it)."""
    from pathlib import Path

    from orchestrator.telemetry.android import parse_getprop

    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "android"
    names = {
        f: known_name(parse_getprop((fixtures / f"getprop_{f}.txt").read_text()))
        for f in ("pixel8", "galaxy_s24")
    }
    assert names == {"pixel8": "google-pixel-8", "galaxy_s24": "samsung-sm-s921b"}
