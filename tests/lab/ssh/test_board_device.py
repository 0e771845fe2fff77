"""The SshDevice itself against the loopback board: info, commands, files, deadlines, errors."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path, PurePosixPath

import pytest

from orchestrator.devices.ssh import SshDevice
from orchestrator.errors import DeviceError

from .conftest import free_port


def test_a_board_describes_itself(board):
    info = board.device().info()
    assert info.kind == "ssh" and info.serial == f"127.0.0.1:{board.port}"
    assert info.cores == os.cpu_count()
    assert info.ram_mb and info.ram_mb > 100
    assert info.os and info.cpu and info.abi == os.uname().machine
    assert info.free_storage_mb and info.free_storage_mb > 0
    assert info.extra["hostname"] == os.uname().nodename
    assert info.extra["litert_lm"] is True


def test_a_command_streams_its_lines_and_exit_code(board):
    dev = board.device()
    lines: list[str] = []
    text = 'it\'s a "quoted" $HOME; `x` *'
    ex = dev.run(
        ["sh", "-c", 'printf "%s\\n" "$1" one two; echo err >&2; exit 3', "sh", text],
        timeout_s=10,
        on_line=lines.append,
    )
    assert lines == [text, "one", "two"]
    assert ex.code == 3 and ex.signal is None and not ex.timed_out
    assert "err" in ex.output_tail


def test_a_command_past_its_deadline_is_gone_on_the_board(board):
    dev = board.device()
    marker = f"/tmp/edgefarm-lab-{os.getpid()}-sleep"
    t0 = time.monotonic()
    ex = dev.run(["sh", "-c", f"echo $$ > {marker}; exec sleep 30"], timeout_s=1)
    took = time.monotonic() - t0
    assert ex.timed_out and ex.code is None and ex.signal == 9
    assert took < 15, took  # far below the command's 30 s, with room for a loaded 2-core box
    pid = int(Path(marker).read_text())
    Path(marker).unlink()
    assert _gone(pid), f"sleep (pid {pid}) still runs on the board"


def _gone(pid: int, wait_s: float = 3.0) -> bool:
    """The process no longer exists (or is a zombie waiting to be reaped) within wait_s."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return True
        if "\nState:\tZ" in status:
            return True
        time.sleep(0.05)
    return False


def test_push_skips_files_that_already_match(board, tmp_path):
    dev = board.device(workdir=tmp_path / "wd")
    src = tmp_path / "tree"
    (src / "sub").mkdir(parents=True)
    (src / "a.txt").write_text("alpha")
    (src / "sub" / "big.bin").write_bytes(os.urandom(600 * 1024))  # >= 256 KiB: rsync
    dst = PurePosixPath(str(tmp_path / "wd" / "tree"))
    first = dev.push(src, dst)
    assert (first.files, first.files_skipped) == (2, 0)
    assert (tmp_path / "wd" / "tree" / "sub" / "big.bin").read_bytes() == (
        src / "sub" / "big.bin"
    ).read_bytes()
    again = dev.push(src, dst)
    assert (again.files, again.bytes_sent, again.files_skipped) == (0, 0, 2)
    (src / "a.txt").write_text("beta!")
    third = dev.push(src, dst)
    assert (third.files, third.files_skipped) == (1, 1)
    assert (tmp_path / "wd" / "tree" / "a.txt").read_text() == "beta!"
    back = tmp_path / "back.txt"
    assert dev.pull(dst / "a.txt", back) == 5 and back.read_text() == "beta!"
    with pytest.raises(DeviceError, match="no file"):
        dev.pull(dst / "missing", tmp_path / "x")


def test_a_closed_port_is_a_clear_error_not_a_hang(board):
    port = free_port(50000)
    dev = SshDevice("pi-down", "127.0.0.1", port=port, user=board.user, identity_file=board.key)
    t0 = time.monotonic()
    with pytest.raises(DeviceError) as e:
        dev.info()
    assert time.monotonic() - t0 < 20  # a clear error, not a hang (generous for a loaded 2-core box)
    assert f"pi-down (ssh {board.user}@127.0.0.1:{port})" in str(e.value)
    assert "fix:" in str(e.value) and "sshd" in str(e.value)
    assert dev.alive() is False


def test_a_key_the_board_does_not_know_is_refused_with_the_fix(board, tmp_path):
    other = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    dev = SshDevice("pi-lab", "127.0.0.1", port=board.port, user=board.user, identity_file=other)
    with pytest.raises(DeviceError, match="ssh-copy-id"):
        dev.info()
