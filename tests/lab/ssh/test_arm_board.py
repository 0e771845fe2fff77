"""The board path on the architecture a Pi has: Debian arm64 python3.11 under qemu-aarch64 (CPU pinned
to cortex-a76) behind a real sshd, prepared by `edgefarm setup` from bare, then run through the CLI.

Proves the aarch64 wheel + glibc + Python path and the setup/run code against it; not a Pi's speed,
kernel or thermals (see docs/boards.md). Emulated inference is ~13-15x slower: a handful of samples.
"""

from __future__ import annotations

import json
import time

import pytest

from orchestrator.datasets import BUNDLED_DATASET, load_dataset
from orchestrator.run.selection import select_samples

from ..local.conftest import edgefarm, only_run_dir, results
from .conftest import INDEX_HITS, free_port, write_inventory

MODALITIES = ("text", "image", "audio")
EVERY_MODALITY = {"image", "audio", "text", "multi_turn", "combination", "structured_output", "tool_call"}
TIMINGS: dict[str, float] = {}


@pytest.fixture(scope="module")
def offline_board(arm_board, tmp_path_factory):
    """A bare aarch64 board, `devices` before, `setup --offline`, `devices` after."""
    tmp = tmp_path_factory.mktemp("arm-offline")
    inv = write_inventory(tmp / "devices.yaml", arm_board.entry("pi5-arm", tmp / "work"))
    before = edgefarm("devices", "--inventory", str(inv), "--json")
    refused = edgefarm("run", "--devices", "pi5-arm", "--inventory", str(inv), "--out", str(tmp / "runs0"),
                       "--limit", "1")  # fmt: skip
    t0 = time.monotonic()
    # the host downloads the wheel for the board's platform (from the lab's index: no internet needed)
    setup = edgefarm("setup", "pi5-arm", "--inventory", str(inv), "--offline", "--wheels", str(tmp / "wheels"),
                     "--json", env={"PIP_INDEX_URL": arm_board.index_url})  # fmt: skip
    TIMINGS["setup_offline_s"] = time.monotonic() - t0
    after = edgefarm("devices", "--inventory", str(inv), "--json")
    return inv, tmp, before, setup, after, refused


def test_a_bare_board_is_listed_as_needing_setup_with_all_its_facts(offline_board):
    _, _, before, *_ = offline_board
    assert before.returncode == 0, before.stderr
    data = json.loads(before.stdout)
    (pi,) = [u for u in data["unusable"] if u["name"] == "pi5-arm"]
    assert pi["state"] == "needs setup", pi
    assert "edgefarm setup pi5-arm" in pi["problem"]
    assert pi["abi"] == "aarch64" and pi["cpu"] == "4x Cortex-A76" and pi["soc"] == "BCM2712"
    assert pi["model"] == "Raspberry Pi 5 Model B Rev 1.0"
    assert pi["cores"] and pi["ram_mb"] and pi["free_storage_mb"] and pi["os"].startswith("Debian")
    assert pi["extra"]["python_version"].startswith("3.11") and pi["extra"]["libc"].startswith("glibc 2.")
    refused = offline_board[-1]  # `run` on it says what to do
    assert refused.returncode == 3 and "edgefarm setup pi5-arm" in refused.stderr, refused.stderr[-2000:]


def test_offline_setup_makes_the_board_ready(offline_board):
    _, _, _, setup, after, _ = offline_board
    assert setup.returncode == 0, setup.stderr[-3000:]
    (res,) = json.loads(setup.stdout)["boards"]
    assert res["mode"] == "offline" and res["verdict"]["ok"] and res["abi"] == "aarch64"
    assert res["litert_lm_version"] == "0.18.1" and res["python"].endswith("/work/venv/bin/python3")
    assert {c["name"] for c in res["verdict"]["checks"]} == {"architecture", "python", "glibc", "disk", "ram"}
    tmp = offline_board[1]
    (wheel,) = (tmp / "wheels").glob("litert_lm_api-0.18.1-*manylinux_2_27_aarch64.whl")  # downloaded here
    assert (tmp / "work" / "wheels" / wheel.name).read_bytes() == wheel.read_bytes()  # pushed
    assert not (tmp / "work" / "venv" / "bin" / "pip").exists()  # offline: no pip on the board needed
    assert after.returncode == 0, after.stderr
    listed = {d["name"]: d for d in json.loads(after.stdout)["devices"]}
    pi = listed["pi5-arm"]
    assert pi["state"] == "device" and pi["abi"] == "aarch64" and pi["extra"]["litert_lm_version"] == "0.18.1"
    assert len(pi["extra"]["runner_sha256"]) == 64


def test_online_setup_then_every_modality_runs_and_answers_as_on_this_host(arm_board, tmp_path):
    """ONE story on the emulated board (each aarch64 run costs a model load under qemu): a bare board,
    `setup` online (the board's own pip, its PIP_INDEX_URL, installs the pinned wheel into the env);
    then `run --devices all` with no phone attached runs a slice of every modality on it, and its
    answers equal this host's for greedy decoding (the same samples through the local runner)."""
    inv = write_inventory(tmp_path / "devices.yaml", arm_board.entry("pi5-online", tmp_path / "work"))
    INDEX_HITS.clear()
    t0 = time.monotonic()
    setup = edgefarm("setup", "pi5-online", "--inventory", str(inv), "--json")
    TIMINGS["setup_online_s"] = time.monotonic() - t0
    assert setup.returncode == 0, setup.stderr[-3000:]
    (res,) = json.loads(setup.stdout)["boards"]
    assert res["mode"] == "online" and res["litert_lm_version"] == "0.18.1" and res["abi"] == "aarch64"
    assert any(h.endswith("aarch64.whl") for h in INDEX_HITS), INDEX_HITS  # fetched from the board's index
    # by the pip wheel the board's Python carries (Debian's /usr/share/python-wheels), run from that wheel:
    # ensurepip never installed (and byte-compiled) pip and setuptools into the env
    assert not list((tmp_path / "work" / "venv").glob("lib/python3*/site-packages/pip")), "pip in the env"
    out = tmp_path / "runs"
    no_adb = {"ANDROID_ADB_SERVER_PORT": str(free_port(52000))}
    t0 = time.monotonic()
    p = edgefarm("run", "--devices", "all", "--inventory", str(inv), "--out", str(out), "--per-modality", "1",
                 "--max-output-tokens", "8", "--sample-timeout", "240", env=no_adb)  # fmt: skip
    TIMINGS["arm_every_modality_run_s"] = time.monotonic() - t0
    assert p.returncode == 0, p.stderr[-3000:]
    run_dir = only_run_dir(out)
    rows = results(run_dir, "pi5-online")
    assert len(rows) == 7
    report = json.loads((run_dir / "devices" / "pi5-online" / "report.json").read_text())
    assert {s["modality"] for s in report["samples"]} == EVERY_MODALITY
    ok = [r for r in rows if r["status"] == "ok"]
    assert len(ok) >= 6, [(r["id"], r["status"], r["error"]) for r in rows]
    assert all(r["ttft_ms"] > 0 and r["decode_tps"] > 0 for r in ok)
    outcome = json.loads((run_dir / "devices" / "pi5-online" / "outcome.json").read_text())
    assert outcome["runner"]["runtime_version"] == "0.18.1" and len(outcome["runner"]["runner_sha256"]) == 64
    device = json.loads((run_dir / "devices" / "pi5-online" / "device.json").read_text())
    assert device["abi"] == "aarch64" and device["cpu"] == "4x Cortex-A76"
    assert device["extra"]["litert_lm_version"] == "0.18.1"
    assert rows[0]["thermal_before"]["throttled"] == "0x0" and rows[0]["thermal_after"]["arm_mhz"] == 2400.0

    # the same samples on this host (x86_64, the local runner): greedy decoding answers alike
    local_inv = write_inventory(tmp_path / "local.yaml",
                                {"name": "this-host", "kind": "local", "workdir": str(tmp_path / "lw")})  # fmt: skip
    t0 = time.monotonic()
    host = edgefarm("run", "--devices", "this-host", "--inventory", str(local_inv), "--out",
                    str(tmp_path / "host"), "--per-modality", "1", "--max-output-tokens", "8")  # fmt: skip
    TIMINGS["host_run_s"] = time.monotonic() - t0
    assert host.returncode == 0, host.stderr[-3000:]
    host_rows = {r["id"]: r for r in results(only_run_dir(tmp_path / "host"), "this-host")}
    arm_rows = {r["id"]: r for r in rows}
    assert sorted(arm_rows) == sorted(host_rows)
    ids = [s.id for s in select_samples(load_dataset(BUNDLED_DATASET), list(MODALITIES), None, 1)]
    assert len(ids) == 3 and set(ids) <= set(arm_rows)
    for i in ids:  # text, image and audio must answer on both
        assert arm_rows[i]["status"] == host_rows[i]["status"] == "ok", (arm_rows[i], host_rows[i])
        assert arm_rows[i]["output"], i
    for i, row in arm_rows.items():
        if row["status"] == host_rows[i]["status"] == "ok":
            assert row["output"] == host_rows[i]["output"], i
        TIMINGS[f"{i} host_ms"] = host_rows[i]["wall_ms"]
        TIMINGS[f"{i} arm_ms"] = row["wall_ms"]
    print("timings", json.dumps(TIMINGS, indent=1))
