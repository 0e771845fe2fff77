"""What goes wrong with boards, through the real CLI: each is one line saying what happened (naming the
board) and one `fix:` line, never a traceback. (File copies trusting exactly the host keys commands do, with
$HOME not the account's home: test_board_cli.py's runs.)"""

from __future__ import annotations

import json
import shutil
import subprocess

from ..local.conftest import edgefarm, only_run_dir
from .conftest import keygen, known_hosts, sshd, write_inventory


def _error(p: subprocess.CompletedProcess) -> tuple[str, str]:
    """(the `error:` line, the `fix:` line) of a failed command; anything else fails the test."""
    assert p.returncode != 0 and "Traceback" not in p.stderr, p.stderr
    lines = p.stderr.splitlines()
    i = next(n for n, ln in enumerate(lines) if ln.startswith("error:"))
    assert lines[i + 1].startswith("  fix: "), lines[i : i + 3]
    return lines[i], lines[i + 1]


def test_a_wrong_host_key_is_refused_by_commands_and_copies_with_the_fix(board, tmp_path):
    home = tmp_path / "home"
    known_hosts(home, board, keygen(tmp_path / "impostor").with_suffix(".pub"))
    inv = write_inventory(tmp_path / "devices.yaml", board.entry("pi-lab", tmp_path / "work"))
    what, fix = _error(edgefarm("setup", "pi-lab", "--inventory", str(inv), env={"HOME": str(home)}))
    assert f"pi-lab (ssh {board.user}@127.0.0.1:{board.port})" in what and "host key does not match" in what
    assert f"-R '[127.0.0.1]:{board.port}'" in fix and "ssh-keyscan" in fix
    # the system ssh under rsync is held to the same file: it refuses too
    from orchestrator.devices.ssh import SshDevice

    dev = SshDevice.from_entry({**board.entry("pi-lab"), "known_hosts": str(home / ".ssh" / "known_hosts")})
    argv = [*dev.link.ssh_command(), f"{board.user}@{board.host}", "true"]
    refused = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    assert refused.returncode != 0 and "Host key verification failed" in refused.stderr, refused.stderr


def test_a_refused_login_is_one_line_with_the_fix(board, tmp_path):
    entry = {**board.entry("pi-lab", tmp_path / "work"), "identity_file": str(keygen(tmp_path / "stranger"))}
    inv = write_inventory(tmp_path / "devices.yaml", entry)
    what, fix = _error(edgefarm("setup", "pi-lab", "--inventory", str(inv)))
    assert "pi-lab (ssh" in what and "refused" in what and "ssh-copy-id" in fix


def test_a_board_with_python_older_than_3_10_is_refused_with_the_fix(arm_board, tmp_path):
    """Raspberry Pi OS 11 ships Python 3.9 (here: Debian 11's aarch64 python3.9 under qemu)."""
    entry = {**arm_board.entry("pi4-bullseye", tmp_path / "work"), "python": str(arm_board.old_python)}
    inv = write_inventory(tmp_path / "devices.yaml", entry)
    listing = edgefarm("devices", "--inventory", str(inv), "--json")
    (pi,) = json.loads(listing.stdout)["unusable"]
    assert (
        pi["state"] == "needs setup"
        and pi["extra"]["python_version"].startswith("3.9")
        and pi["abi"] == "aarch64"
    )
    what, fix = _error(edgefarm("setup", "pi4-bullseye", "--inventory", str(inv), "--offline"))
    assert "pi4-bullseye (ssh" in what and "python is 3.9" in what and "needs 3.10+" in what
    assert "python3.11" in fix and "`python:`" in fix
    assert not (tmp_path / "work" / "venv").exists()  # nothing touched before the verdict passed


def test_too_little_free_disk_for_the_env_and_the_model_is_refused_with_the_fix(board, tmp_path):
    """The verdict weighs the work folder's free space against the env and the model: a model bigger
    than the board's disk (a sparse file here) stops setup before anything is written."""
    model = tmp_path / "huge.litertlm"
    with open(model, "wb") as f:
        f.truncate(shutil.disk_usage(tmp_path).free * 2 + 2**30)  # sparse: twice the free space
    inv = write_inventory(tmp_path / "devices.yaml", board.entry("pi-lab", tmp_path / "work"))
    what, fix = _error(edgefarm("setup", "pi-lab", "--inventory", str(inv), "--model", str(model)))
    assert "pi-lab (ssh" in what and "disk is" in what and "MB free" in what
    assert "free space on the board" in fix and "workdir" in fix
    assert not (tmp_path / "work" / "venv").exists()


def test_a_fix_hint_with_hostile_values_pastes_as_exactly_one_command(board, tmp_path):
    """Issue 24: hints pasted values unquoted (`ssh -p P root@127.0.0.1;touch X true`). A key file in a
    folder named `keys; touch HACKED` (a legal path) is refused by the board: the hint's command, run by
    a shell with a stand-in `ssh-copy-id` first on PATH, is that one command with the path as one word."""
    keys = tmp_path / "keys; touch HACKED $(touch HACKED2)"
    keys.mkdir()
    entry = {**board.entry("pi-lab", tmp_path / "work"), "identity_file": str(keygen(keys / "stranger"))}
    inv = write_inventory(tmp_path / "devices.yaml", entry)
    _what, fix = _error(edgefarm("setup", "pi-lab", "--inventory", str(inv)))
    hint = fix.split("`")[1]
    assert hint.startswith("ssh-copy-id "), fix
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ssh-copy-id").write_text(
        '#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done >> "$ARGS_FILE"\n'
    )
    (bin_dir / "ssh-copy-id").chmod(0o755)
    args = tmp_path / "args"
    run = subprocess.run(["sh", "-c", hint], cwd=tmp_path, capture_output=True, text=True, timeout=30, check=False,
                         env={"PATH": f"{bin_dir}:/usr/bin:/bin", "ARGS_FILE": str(args)})  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert args.read_text().splitlines() == ["-i", str(keys / "stranger"), "-p", str(board.port),
                                             f"{board.user}@{board.host}"]  # fmt: skip
    assert not (tmp_path / "HACKED").exists() and not (tmp_path / "HACKED2").exists()


def test_a_board_whose_sshd_has_no_sftp_runs_over_rsync_or_the_command_channel(tmp_path):
    """Issue 24: without `Subsystem sftp` in sshd_config, setup failed with "check host/port ... sshd
    running". Now files go over rsync (or `cat` on the command channel) and the run completes; the
    copy functions name SFTP when they cannot help."""
    with sshd(tmp_path / "sshd", subsystem=False) as nosftp:
        inv = write_inventory(tmp_path / "devices.yaml", nosftp.entry("pi-nosftp", tmp_path / "work"))
        out = tmp_path / "runs"
        p = edgefarm("run", "--devices", "pi-nosftp", "--inventory", str(inv), "--out", str(out),
                     "--modality", "text", "--limit", "2", "--max-output-tokens", "4")  # fmt: skip
        assert p.returncode == 0, p.stderr[-3000:]
        assert "Traceback" not in p.stderr
        run_dir = only_run_dir(out)
        rows = [
            json.loads(x)
            for x in (run_dir / "devices" / "pi-nosftp" / "results.jsonl").read_text().splitlines()
        ]
        assert [r["status"] for r in rows] == ["ok", "ok"]

        # without rsync too: small files and pulls over the command channel, byte for byte
        from orchestrator.devices.ssh import SshDevice

        dev = SshDevice.from_entry(nosftp.entry("pi-nosftp", tmp_path / "plain"))
        dev._remote_rsync = False  # as on a board without rsync
        blob = tmp_path / "blob.bin"
        blob.write_bytes(bytes(range(256)) * 4096)  # 1 MiB, every byte value
        assert dev.push(blob, dev.workdir / "blob.bin").files == 1
        assert dev.pull(dev.workdir / "blob.bin", tmp_path / "back.bin") == blob.stat().st_size
        assert (tmp_path / "back.bin").read_bytes() == blob.read_bytes()
        dev.close()
