"""The same plan through both farms (docs/cluster.md): `--sustain 2` on every lab phone, one of them
pinned by its farm host's devices.yaml (`threads: 2`), run once by the cluster (each phone's job on
its farm host's agent) and once by one controller driving the same phones through their adb servers
with the same pins in its own devices.yaml. Both give the same rows (every pass, its `sustain_pass`),
the same settings on the device (the pin, not the default), the same report figures (all but the
clock's), and progress totals that count every pass."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from orchestrator.farm.rundir import device_folder

pytestmark = pytest.mark.cluster
LIMIT, PASSES, PINNED_THREADS = 2, 2, 2
CLOCK_FREE = ("device", "kind", "hardware", "soc", "backend", "samples", "scored", "passed", "pass_rate_pct",
              "verdict", "status_counts", "threads", "max_output_tokens", "backend_requested", "runner_kind",
              "figures_over", "model_loads", "skipped", "error")  # fmt: skip


def _rows(run: Path, device: str) -> list[tuple]:
    folder = device_folder(run, device)
    lines = [
        json.loads(x)
        for f in ("results.jsonl", "repeats.jsonl")
        for x in (folder / f).read_text().splitlines()
    ]
    return sorted((r["id"], r["status"], r["output"], r.get("sustain_pass")) for r in lines)


def _figures(run: Path) -> dict[str, dict]:
    report = json.loads((run / "report.json").read_text())
    return {d["device"]: {k: d.get(k) for k in CLOCK_FREE} for d in report["devices"]}


def _settings(run: Path, device: str) -> tuple:
    used = json.loads((device_folder(run, device) / "device.json").read_text())["extra"]  # runners/stamp.py
    ran = json.loads((device_folder(run, device) / "outcome.json").read_text())["runner"]["settings"]
    return used["backend"], used["threads"], ran["backend"], ran["threads"]


def _run_dir(stdout: str) -> Path:
    return Path(stdout.strip().splitlines()[-1]).parent


def test_the_same_plan_through_both_farms_gives_the_same_rows_and_figures_with_sustain_and_pins(
    cluster_lab, tmp_path
):
    lab = cluster_lab
    listing = lab.listing()
    by_host = {h["host"]: [i["name"] for i in h["infos"]] for h in listing["hosts"]}
    serial = lab.phones.serials[lab.hosts["h1"].phones[0]]
    pinned = next(i["name"] for h in listing["hosts"] for i in h["infos"] if i["serial"] == serial)
    entry = f"devices:\n  - {{name: {pinned}, kind: adb, serial: '{serial}', threads: {PINNED_THREADS}}}\n"
    common = ["--devices", "all", "--limit", str(LIMIT), "--modality", "text", "--max-output-tokens", "8",
              "--sustain", str(PASSES)]  # fmt: skip
    lab.hosts["h1"].inventory.write_text(entry)  # the farm host's own devices.yaml pins its phone
    try:
        assert lab.phones_by_host(fresh=True)["h1"] == by_host["h1"]  # the pin keeps the phone's name
        ray = lab.edgefarm("run", "--cluster", lab.address, "--out", str(tmp_path / "ray"), *common)
    finally:
        lab.hosts["h1"].inventory.write_text("devices: []\n")
    assert ray.returncode == 0, ray.stderr[-4000:]
    yaml = tmp_path / "devices.yaml"
    yaml.write_text(f"adb_servers: [127.0.0.1:{lab.hosts['h2'].adb.port}]\n{entry}")
    one = lab.edgefarm("run", "--inventory", str(yaml), "--out", str(tmp_path / "one"), *common,
                       ANDROID_ADB_SERVER_PORT=str(lab.hosts["h1"].adb.port))  # fmt: skip
    assert one.returncode == 0, one.stderr[-4000:]
    on_ray, on_one = _run_dir(ray.stdout), _run_dir(one.stdout)

    phones = [p for ps in by_host.values() for p in ps]
    for phone in phones:
        rows = _rows(on_ray, phone)
        assert rows == _rows(on_one, phone)
        assert sorted(r[3] for r in rows) == [1] * LIMIT + [2] * LIMIT  # both passes, each marked
        assert _settings(on_ray, phone) == _settings(on_one, phone)
    assert _settings(on_ray, pinned) == ("cpu", PINNED_THREADS, "cpu", PINNED_THREADS)  # the host's pin ran
    assert _settings(on_ray, by_host["h2"][0])[1] is None  # no pin there: the runtime's default
    assert _figures(on_ray) == _figures(on_one) and sorted(_figures(on_ray)) == sorted(phones)
    for run in (on_ray, on_one):
        curves = json.loads((run / "report.json").read_text())["sustain"]
        assert sorted(curves) == sorted(phones) and all(len(c["passes"]) == PASSES for c in curves.values())
    runs = LIMIT * PASSES
    for proc in (ray, one):  # the progress totals count every pass (plain lines: stderr is a pipe)
        for phone in phones:
            line = rf"^{re.escape(phone)}\s+{runs}/{runs} runs \(ok {runs},"
            assert re.search(line, proc.stderr, re.MULTILINE), proc.stderr[-3000:]
