"""`edgefarm bench --cluster`: the grid on every farm host's phones through the cluster's farm (the same
DeviceJobs and worker as one controller's), with --sustain's passes in time order on the native runner,
and a farm host's own devices.yaml `memory_bandwidth_gbs` reaching the decode bound."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.farm.rundir import device_folder

pytestmark = pytest.mark.cluster

TINY_TEXT = Path(__file__).resolve().parents[3] / "data" / "models" / "tiny-text.litertlm"
BANDWIDTH_GBS = 34.1


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.is_file() else []


def test_a_bench_across_farm_hosts_with_sustain_and_a_hosts_bandwidth(cluster_lab, tmp_path):
    lab = cluster_lab
    host_of = {i["name"]: h["host"] for h in lab.listing()["hosts"] for i in h["infos"]}
    redmi = next(n for n, h in host_of.items() if h == "h2")
    serial = lab.phones.serials[lab.hosts["h2"].phones[0]]
    entry = {"name": redmi, "kind": "adb", "serial": serial, "memory_bandwidth_gbs": BANDWIDTH_GBS}
    lab.hosts["h2"].inventory.write_text(json.dumps({"devices": [entry]}))  # the farm host's own devices.yaml
    out = tmp_path / "runs"
    try:
        p = lab.edgefarm("bench", "--cluster", lab.address, "--devices", "all", "--model", str(TINY_TEXT),
                         "--out", str(out), "--db", "none", "-p", "16", "-n", "4,8", "-d", "0,32",
                         "--sustain", "2", "--backend", "cpu", "-o", "json",
                         "--settle-s", "1")  # fmt: skip  # bench settles by default: a 1-s window, not 60 s
    finally:
        lab.hosts["h2"].inventory.write_text("devices: []\n")
    assert p.returncode == 0, p.stderr[-4000:]
    rows = json.loads(p.stdout)
    assert sorted({r["device"] for r in rows}) == sorted(host_of) and len(host_of) == 3
    assert len(rows) == 3 * 4 * 2  # 3 phones x 4 cells x (pp row + tg row)
    assert all(r["repetitions"] == 2 and r["errors"] == 0 and r["avg_ts"] > 0 for r in rows)
    bound = [r for r in rows if r["test"].startswith("tg") and r["decode_pct_of_bandwidth_bound"] is not None]
    assert {r["device"] for r in bound} == {redmi} and len(bound) == 4  # only h2's devices.yaml declares one
    [run_dir] = [d for d in out.iterdir() if d.is_dir()]
    record = json.loads((run_dir / "run.json").read_text())
    assert sorted(record["cluster"]["hosts"]) == ["h1", "h2"]  # h3 has no phone: nothing crosses to it
    assert record["kind"] == "bench" and record["bench"]["request"]["sustain"] == 2
    curves = json.loads((run_dir / "bench.json").read_text())["sustain"]
    for name in host_of:
        folder = device_folder(run_dir, name)
        assert not (folder / "results.stream.jsonl").exists()
        measured = _jsonl(folder / "results.jsonl") + _jsonl(folder / "repeats.jsonl")
        assert len(measured) == 8
        for r in measured:  # exact counts, each repetition on its own fresh engine
            p_, n_, d_ = (int(s[1:]) for s in r["id"].split("@")[0].split("-")[:3])
            assert r["status"] == "ok" and r["runner"] == "native", r
            assert r["prefill_tokens"] == p_ and r["decode_tokens"] == n_
            assert [t["prefill_tokens"] for t in r["turns"][:-1]] == ([d_] if d_ else [])
        by_load = sorted(measured, key=lambda r: r["engine_load"])  # pass after pass: the loads' order
        assert (
            len({r["engine_load"] for r in by_load}) == 8 and by_load[0]["engine_load"] > 1
        )  # after a warm-up
        assert [r["sustain_pass"] for r in by_load] == [1] * 4 + [2] * 4
        assert json.loads((folder / "outcome.json").read_text())["model_loads"] == 12
        assert [x["sustain_pass"] for x in curves[name]["passes"]] == [1, 2]
        assert curves[name]["passes"][0]["pct_of_first"]["decode_tps"] == 100.0
