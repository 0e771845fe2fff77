"""Device names across farm hosts (cluster/types.py): each host names its phones on its own, so two
hosts with one phone model each both say `pixel-8`. The name is the device's folder in the run, so a
run refuses a name two hosts give, naming both hosts, their serials and the fix; the listing says it.
The lab story through the CLI is tests/lab/cluster/test_identical_phones.py."""

from __future__ import annotations

import pytest

from orchestrator.cluster.types import (
    HostDevices,
    flat_listing,
    name_clashes,
    refuse_clashes,
)
from orchestrator.devices.types import DeviceInfo
from orchestrator.errors import ConfigError


def _host(name: str, *phones: tuple[str, str]) -> HostDevices:
    return HostDevices(name, tuple(DeviceInfo(n, "adb", serial=s) for n, s in phones), ())


HOSTS = [
    _host("h1", ("pixel-8", "AAA1"), ("galaxy-s24", "BBB2")),
    _host("h2", ("pixel-8", "CCC3")),
    _host("h3", ("redmi-note-13", "DDD4")),
]


def test_a_name_two_hosts_give_is_found_with_both_hosts_and_serials():
    assert name_clashes(HOSTS) == {"pixel-8": [("h1", "AAA1"), ("h2", "CCC3")]}
    assert name_clashes(HOSTS[:1] + HOSTS[2:]) == {}


def test_a_run_using_a_clashing_name_is_refused_naming_both_hosts_and_the_fix():
    with pytest.raises(ConfigError) as e:
        refuse_clashes(HOSTS, ["galaxy-s24", "pixel-8", "redmi-note-13"], where="--devices all --cluster H:1")
    said = str(e.value)
    assert said.startswith("--devices all --cluster H:1: pixel-8 is the name of a device on farm hosts "
                           "h1 (serial AAA1) and h2 (serial CCC3)")  # fmt: skip
    assert "fix: give each such device its own `name:` in its farm host's devices.yaml" in said
    assert "name: pixel-8-h2, kind: adb, serial: 'CCC3'" in said
    assert e.value.exit_code == 2


def test_a_run_that_leaves_the_clashing_name_out_goes_ahead():
    refuse_clashes(HOSTS, ["galaxy-s24", "redmi-note-13"], where="--devices galaxy-s24,redmi-note-13")


def test_the_listing_notes_the_clash():
    _infos, _unusable, notes, _host_of = flat_listing(HOSTS)
    assert any(
        n.startswith("pixel-8 is the name of a device on farm hosts h1") and "refuses" in n for n in notes
    )
