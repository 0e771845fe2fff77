"""Two farm hosts with the same phone model: each host names its phone after the model, so both say
`redmi-note-13`. A device's name is its folder in the run, so a `--cluster` run is refused before any
folder exists, naming both hosts, both serials and the fix; once the new phone has its own name in
its host's devices.yaml, `--shard` splits the samples between the two hosts' phones, each sample run
once, on the phone the split gave it (docs/cluster.md)."""

from __future__ import annotations

import json

import pytest

from android_runner.contract import read_results
from orchestrator.farm.rundir import device_folder

from ..adb.sandbox import REDMI_NOTE_13

pytestmark = pytest.mark.cluster
LIMIT = 6
PINNED = "redmi-h3"


def test_identical_phones_on_two_hosts_are_refused_until_named_then_sharded_across_the_hosts(
    cluster_lab, tmp_path
):
    lab = cluster_lab
    twin = lab.phones_by_host()["h2"][0]
    lab.ns.call(lab.phones.add_phone, "redmi-h3", REDMI_NOTE_13, server=list(lab.hosts).index("h3"))
    try:
        serials = {"h2": lab.phones.serials["redmi"], "h3": lab.phones.serials["redmi-h3"]}
        common = ["--limit", str(LIMIT), "--modality", "text", "--max-output-tokens", "8"]
        p = lab.edgefarm(
            "run", "--cluster", lab.address, "--devices", "all", "--out", str(tmp_path / "a"), *common
        )
        assert p.returncode == 2, p.stderr[-3000:]
        said = " ".join(p.stderr.split())
        assert (f"{twin} is the name of a device on farm hosts h2 (serial {serials['h2']}) "
                f"and h3 (serial {serials['h3']})") in said, said[-3000:]  # fmt: skip
        assert "devices.yaml" in said and f"serial: '{serials['h3']}'" in said
        assert not (tmp_path / "a").exists() or not any(
            (tmp_path / "a").iterdir()
        )  # refused before any folder

        lab.hosts["h3"].inventory.write_text(
            f"devices:\n  - {{name: {PINNED}, kind: adb, serial: '{serials['h3']}'}}\n"
        )
        assert lab.phones_by_host(fresh=True)["h3"] == [PINNED]
        p = lab.edgefarm("run", "--cluster", lab.address, "--devices", f"{twin},{PINNED}", "--shard",
                         "--out", str(tmp_path / "b"), *common)  # fmt: skip
        assert p.returncode == 0, p.stderr[-4000:]
    finally:
        lab.hosts["h3"].inventory.write_text("devices: []\n")
        lab.ns.call(lab.phones.remove_phone, "redmi-h3")
    run = next((tmp_path / "b").iterdir())
    record = json.loads((run / "run.json").read_text())
    (group, members), *more = record["shards"].items()
    assert not more and sorted(members) == sorted([twin, PINNED])
    assert sorted(record["cluster"]["hosts"]) == ["h2", "h3"]
    shares = {m: [r.id for r in read_results(device_folder(run, m) / "results.jsonl")] for m in members}
    assert all(shares.values()) and not set(shares[twin]) & set(shares[PINNED])  # both ran, no sample twice
    merged = list(read_results(device_folder(run, group) / "results.jsonl"))
    assert sorted(r.id for r in merged) == sorted(shares[twin] + shares[PINNED]) and len(merged) == LIMIT
    ran_on = {r.id: r.ran_on for r in merged}
    assert {ran_on[i] for i in shares[twin]} == {serials["h2"]} and {ran_on[i] for i in shares[PINNED]} == {
        serials["h3"]
    }
