"""User stories through the real `edgefarm` CLI with a Raspberry Pi stand-in on loopback sshd."""

from __future__ import annotations

import json
import time

import pytest

from ..local.conftest import device_json, edgefarm, only_run_dir, results, run_json
from .conftest import free_port, known_hosts, write_inventory

EVERY_MODALITY = {"image", "audio", "text", "multi_turn", "combination", "structured_output", "tool_call"}


@pytest.fixture(scope="module")
def board_run(board, tmp_path_factory):
    """`edgefarm run --devices pi-lab --per-modality 1` twice on the same board (second: nothing to push).
    $HOME is not the account's home (a CI container, a service account): the board is listed in
    $HOME/.ssh/known_hosts only, so commands (asyncssh) and the model push (rsync over the system ssh)
    must both verify its host key there."""
    tmp = tmp_path_factory.mktemp("pi-run")
    home = tmp / "home"
    known_hosts(home, board, board.root / "host_ed25519.pub")
    inv = write_inventory(tmp / "devices.yaml", board.entry("pi-lab", tmp / "board-work"))
    ran = []
    for i in (1, 2):
        out = tmp / f"runs{i}"
        t0 = time.monotonic()
        p = edgefarm(
            "run", "--devices", "pi-lab", "--inventory", str(inv), "--out", str(out),
            "--per-modality", "1", "--max-output-tokens", "8", env={"HOME": str(home)},
        )  # fmt: skip
        ran.append((p, only_run_dir(out), time.monotonic() - t0))
    return ran


def test_devices_lists_the_board_with_its_info(board, tmp_path):
    inv = write_inventory(tmp_path / "devices.yaml", board.entry("pi-lab"))
    p = edgefarm("devices", "--inventory", str(inv), "--json")
    assert p.returncode == 0, p.stderr
    listed = {d["name"]: d for d in json.loads(p.stdout)["devices"]}
    pi = listed["pi-lab"]
    assert pi["kind"] == "ssh" and pi["serial"] == f"127.0.0.1:{board.port}" and pi["state"] == "device"
    assert pi["cores"] >= 1 and pi["ram_mb"] > 0 and pi["os"] and pi["cpu"]
    assert pi["extra"]["litert_lm"] is True


def test_every_modality_runs_on_the_board_with_real_figures(board_run):
    p, run_dir, _ = board_run[0]
    assert p.returncode == 0, p.stderr
    rows = results(run_dir, "pi-lab")
    assert len(rows) == 7
    assert {s["modality"] for s in device_json(run_dir, "report.json", "pi-lab")["samples"]} == EVERY_MODALITY
    ok = [r for r in rows if r["status"] == "ok"]
    assert len(ok) >= 6, [(r["id"], r["status"], r["error"]) for r in rows]
    for r in ok:
        assert r["ttft_ms"] > 0 and r["decode_tps"] > 0 and r["peak_rss_mb"] > 0
    assert device_json(run_dir, "device.json", "pi-lab")["kind"] == "ssh"
    row = run_json(run_dir)["devices"][0]
    assert row["device"] == "pi-lab" and row["samples"] == 7 and row["ttft_ms_p50"] > 0
    assert "| pi-lab |" in (run_dir / "report.md").read_text()
    first = device_json(run_dir, "outcome.json", "pi-lab")
    assert first["model_push"]["bytes_sent"] > 0 and first["error"] == ""
    # issue 41: the board's background CPU and load average before its run (its info), in run.json's conditions
    start = run_json(run_dir, "run.json")["conditions"]["devices"]["pi-lab"]["start"]
    assert start["background_cores"] is not None and start["background_cores"] >= 0 and start["load1"] is not None


def test_file_copies_check_the_host_key_in_the_same_known_hosts_as_commands(board_run):
    """The runs above had the board's key in $HOME/.ssh/known_hosts only (not the account's home): the
    model went over rsync (the system ssh), held to that same file, and succeeded."""
    p, run_dir, _ = board_run[0]
    assert p.returncode == 0, p.stderr[-3000:]
    push = device_json(run_dir, "outcome.json", "pi-lab")["model_push"]
    assert push["bytes_sent"] > 256 * 1024  # big enough to go with rsync


def test_a_second_run_pushes_no_model_bytes(board_run):
    p, run_dir, _ = board_run[1]
    assert p.returncode == 0, p.stderr
    push = device_json(run_dir, "outcome.json", "pi-lab")["model_push"]
    assert push["bytes_sent"] == 0 and push["files_skipped"] == 1 and push["bytes_skipped"] > 0
    assert len([r for r in results(run_dir, "pi-lab") if r["status"] == "ok"]) >= 6


def test_a_board_that_is_down_is_reported_with_the_fix_and_the_others_still_run(board, tmp_path):
    down = {**board.entry("pi-down"), "port": free_port(50000)}
    inv = write_inventory(
        tmp_path / "devices.yaml",
        down,
        {"name": "this-host", "kind": "local", "workdir": str(tmp_path / "local-work")},
    )
    listing = edgefarm("devices", "--inventory", str(inv), "--json")
    assert listing.returncode == 0, listing.stderr
    data = json.loads(listing.stdout)
    assert [d["name"] for d in data["devices"]] == ["this-host"]
    (bad,) = data["unusable"]
    assert bad["name"] == "pi-down" and bad["state"] == "unreachable"
    assert "fix:" in bad["problem"] and "sshd" in bad["problem"]

    # `all` uses what answers (the same rule as `devices`): the run completes on this host, and says why
    # the board was not used, with the fix
    out = tmp_path / "runs"
    p = edgefarm(
        "run", "--devices", "all", "--inventory", str(inv), "--out", str(out),
        "--modality", "text", "--limit", "1", "--max-output-tokens", "4",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "pi-down" in p.stderr and "fix:" in p.stderr and "Traceback" not in p.stderr
    run_dir = only_run_dir(out)
    assert [r["status"] for r in results(run_dir, "this-host")] == ["ok"]
    assert [u["name"] for u in run_json(run_dir, "run.json")["unusable"]] == ["pi-down"]

    # named on purpose, the board is tried: its error (with the fix) is its outcome, and the run exits 3
    out2 = tmp_path / "runs2"
    p = edgefarm(
        "run", "--devices", "this-host,pi-down", "--inventory", str(inv), "--out", str(out2),
        "--modality", "text", "--limit", "1", "--max-output-tokens", "4",
    )  # fmt: skip
    assert p.returncode == 3, p.stderr
    run_dir = only_run_dir(out2)
    assert [r["status"] for r in results(run_dir, "this-host")] == ["ok"]
    outcome = device_json(run_dir, "outcome.json", "pi-down")
    assert f"127.0.0.1:{down['port']}" in outcome["error"] and "fix:" in outcome["error"]


def test_setup_all_on_a_board_that_already_has_the_runtime_only_pushes_the_runner(board, tmp_path):
    inv = write_inventory(tmp_path / "devices.yaml", board.entry("pi-lab", tmp_path / "work"))
    p = edgefarm("setup", "all", "--inventory", str(inv), "--json")
    assert p.returncode == 0, p.stderr
    (res,) = json.loads(p.stdout)["boards"]
    assert res["steps"][0] == "runtime already installed" and res["verdict"]["ok"]
    assert not (tmp_path / "work" / "venv").exists() and (tmp_path / "work" / "runner" / "entry.py").is_file()
    assert len(res["runner_sha256"]) == 64
    table = edgefarm("setup", "pi-lab", "--inventory", str(inv))  # the human view: verdict table, one summary
    assert table.returncode == 0 and "setup verdict" in table.stdout and "pi-lab ready" in table.stdout
