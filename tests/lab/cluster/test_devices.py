"""`edgefarm devices --cluster ADDRESS`: every farm host's agent lists the phones of its OWN adb
server (phones are not Ray resources), through the real CLI on the controller."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.cluster


def test_every_farm_host_lists_the_phones_of_its_own_adb_server(cluster_lab):
    p = cluster_lab.edgefarm("devices", "--cluster", cluster_lab.address, "--json")
    assert p.returncode == 0, p.stderr[-3000:]
    doc = json.loads(p.stdout)
    assert [h["host"] for h in doc["hosts"]] == ["h1", "h2", "h3"]
    for host in doc["hosts"]:
        want = sorted(cluster_lab.phones.serials[label] for label in cluster_lab.hosts[host["host"]].phones)
        assert sorted(i["serial"] for i in host["infos"]) == want
        assert all(i["kind"] == "adb" and i["state"] == "device" for i in host["infos"])
    models = {i["serial"]: i["model"] for h in doc["hosts"] for i in h["infos"]}
    assert (
        models[cluster_lab.phones.serials["redmi"]]
        == cluster_lab.phones.phones["redmi"].props["ro.product.model"]
    )

    table = cluster_lab.edgefarm("devices", "--cluster", cluster_lab.address)
    assert table.returncode == 0, table.stderr[-3000:]
    assert "Host" in table.stdout and "h3: no device" in table.stdout
