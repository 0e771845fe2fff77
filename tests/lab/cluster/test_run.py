"""`edgefarm run --cluster`: every phone runs on its farm host's agent with the same session code;
the model and media cross to each host once; the run folder is the same as one controller's, and so
are the answers (docs/cluster.md). That a rerun moves 0 bytes is asserted on the reruns other stories
make anyway: test_controller_killed.py's `--resume` (both hosts: 0 bytes, the model held) and
test_damaged_cache.py's third run (a checked copy: 0 bytes); test_transfer.py's for any file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from android_runner.contract import read_results
from orchestrator.bundled import BUNDLED_MODEL
from orchestrator.farm.rundir import device_folder

pytestmark = pytest.mark.cluster


def _outputs(run_dir: Path, device: str) -> dict[str, str]:
    return {r.id: r.output for r in read_results(device_folder(run_dir, device) / "results.jsonl")}


def _scores(run_dir: Path, device: str) -> dict[str, object]:
    report = json.loads((device_folder(run_dir, device) / "report.json").read_text())
    return {s["test_id"]: (s["metric"], s["score"], s["passed"]) for s in report["samples"]}


def _run_dir(stdout: str) -> Path:
    return Path(stdout.strip().splitlines()[-1]).parent


def test_a_run_across_farm_hosts_equals_one_controllers_and_the_model_crosses_once(cluster_lab, tmp_path):
    lab = cluster_lab
    host_of = {i["name"]: h["host"] for h in lab.listing()["hosts"] for i in h["infos"]}
    assert sorted(host_of.values()) == ["h1", "h1", "h2"]
    common = ["--limit", "2", "--modality", "text", "--max-output-tokens", "8"]
    for host in lab.hosts.values():  # fresh farm hosts: another story may have filled their caches
        shutil.rmtree(host.cache / "cluster", ignore_errors=True)

    p = lab.edgefarm(
        "run", "--cluster", lab.address, "--devices", "all", "--out", str(tmp_path / "c"), *common
    )
    assert p.returncode == 0, p.stderr[-4000:]
    run = _run_dir(p.stdout)
    record = json.loads((run / "run.json").read_text())
    model_bytes = BUNDLED_MODEL.stat().st_size
    hosts = record["cluster"]["hosts"]
    assert sorted(hosts) == ["h1", "h2"]  # h3 has no phone: nothing crosses to it
    for h in hosts.values():
        assert h["bytes_received"] == model_bytes and h["files_sent"] == 1  # text rows: the model only
    for name in host_of:
        dev = device_folder(run, name)
        assert (dev / "results.jsonl").is_file() and (dev / "report.json").is_file()
        assert not (dev / "results.stream.jsonl").exists()
        assert len(_outputs(run, name)) == 2
    assert (run / "report.json").is_file() and (run / "report.html").is_file()
    for host in ("h1", "h2"):  # the model sits in the host's cache under its sha256
        assert len([p for p in (lab.hosts[host].cache / "cluster" / "blobs").rglob("*") if p.is_file()]) == 1

    # one controller driving the same phones through their adb servers gives the same answers
    yaml = tmp_path / "devices.yaml"
    yaml.write_text(f"adb_servers: [127.0.0.1:{lab.hosts['h2'].adb.port}]\n")
    one = lab.edgefarm("run", "--inventory", str(yaml), "--devices", ",".join(host_of),
                       "--out", str(tmp_path / "one"), *common,
                       ANDROID_ADB_SERVER_PORT=str(lab.hosts["h1"].adb.port))  # fmt: skip
    assert one.returncode == 0, one.stderr[-4000:]
    for name in host_of:  # the agents send rows; the controller scores them as one controller does
        assert _outputs(_run_dir(one.stdout), name) == _outputs(run, name)
        assert _scores(_run_dir(one.stdout), name) == _scores(run, name)
        assert len(_scores(run, name)) == 2
