"""`edgefarm doctor --cluster` and run's refusal of a device that cannot run, on farm hosts (issue 30's
gap, closed in issue 34): a 32-bit phone no runner is built for, plugged into farm host h3. Doctor asks
each host's agent to check its own devices (the runner, its runtime library and the phone's storage
are the host's) and names the phone, its host and the fix; `run --cluster --devices all` does not start
it, says why, and runs the others. Before, doctor had no --cluster (and ignored devices.yaml's
`cluster:`, checking this host's devices instead) and a cluster run started the phone anyway."""

from __future__ import annotations

import json

import pytest

from ..adb.sandbox import GALAXY_J5

pytestmark = pytest.mark.cluster
OLD = "samsung-sm-j500f"  # as discovered: no marketing name, so manufacturer + model


def test_doctor_checks_each_farm_hosts_devices_there_and_a_cluster_run_refuses_the_one_that_cannot_run(
    cluster_lab, tmp_path
):
    lab = cluster_lab
    lab.ns.call(lab.phones.add_phone, "j5", GALAXY_J5, server=list(lab.hosts).index("h3"))
    try:
        serial = lab.phones.serials["j5"]
        ready = [n for names in lab.phones_by_host().values() for n in names if n != OLD]
        p = lab.edgefarm("doctor", "--cluster", lab.address, "--devices", "all", COLUMNS="250")
        assert p.returncode == 3, p.stdout + p.stderr[-3000:]
        text = " ".join(p.stdout.split())
        assert f"{OLD} on farm host h3 (adb {serial}, armeabi-v7a): NOT READY" in text, p.stdout
        assert "FAIL runner no runner for armeabi-v7a/armeabi" in text, p.stdout
        assert "fix: edgefarm's phone runners are built for arm64-v8a" in text, p.stdout
        assert f"{len(ready)} of {len(ready) + 1} device(s) ready; not ready: {OLD}" in text, p.stdout
        p = lab.edgefarm("doctor", "--cluster", lab.address, "--devices", "all", "--json")
        assert p.returncode == 3, p.stderr[-3000:]
        doc = json.loads(p.stdout)
        found = {d["name"]: d for d in doc["devices"]}
        assert doc["cluster"] == lab.address and set(found) == {*ready, OLD}
        assert found[OLD]["host"] == "h3" and not found[OLD]["ready"]
        assert all(found[n]["ready"] and found[n]["host"] in ("h1", "h2") for n in ready), found
        for name in ready:  # what a run needs there, all of it checked on the phone's host
            assert {c["need"] for c in found[name]["checks"]} >= {"authorization", "runner", "runtime", "storage",
                                                                   "memory"}  # fmt: skip

        out = tmp_path / "runs"
        p = lab.edgefarm("run", "--cluster", lab.address, "--devices", "all", "--modality", "text", "--limit",
                         "2", "--max-output-tokens", "8", "--out", str(out), COLUMNS="250")  # fmt: skip
        assert p.returncode == 0, p.stderr[-3000:]
        said = " ".join(p.stderr.split())
        assert f"not used: {OLD} (not ready): runner: no runner for armeabi-v7a/armeabi" in said, said[-3000:]
    finally:
        lab.ns.call(lab.phones.remove_phone, "j5")
    (run,) = [d for d in out.iterdir() if d.is_dir()]
    record = json.loads((run / "run.json").read_text())
    assert sorted(record["devices"]) == sorted(ready)
    (refused,) = [u for u in record["unusable"] if u["name"] == OLD]
    assert refused["state"] == "not ready" and "fix: edgefarm's phone runners" in refused["problem"]
    assert not (run / "devices" / OLD).exists()  # never started
    assert f"{OLD} not used (not ready)" in (run / "report.md").read_text()
