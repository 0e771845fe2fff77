"""This host as a device: a feed writes to a running command's stdin (`edgefarm serve`'s channel to the
Python runner), each line at once; a send once the command has ended is a DeviceError, never a hang."""

from pathlib import Path

import pytest

from orchestrator.devices.feed import Feed
from orchestrator.devices.local import LocalDevice
from orchestrator.errors import DeviceError


def test_lines_sent_while_the_command_runs_reach_its_stdin(tmp_path: Path):
    dev = LocalDevice(workdir=tmp_path)
    feed = Feed(dev.name)
    lines: list[str] = []

    def on_line(line: str) -> None:  # each line answered before the next is sent: none was buffered
        lines.append(line)
        if line in ("ready", "got one"):
            feed.send("one\n" if line == "ready" else "two\n")

    ex = dev.run(["sh", "-c", 'echo ready; read a; echo "got $a"; read b; echo "got $b"'], timeout_s=20,
                 on_line=on_line, feed=feed)  # fmt: skip
    assert ex.code == 0 and lines == ["ready", "got one", "got two"]
    with pytest.raises(DeviceError, match="not running"):
        feed.send("three\n")


def test_a_send_to_a_command_that_stopped_reading_is_a_device_error(tmp_path: Path):
    """The runner died with its stdin closed: the write fails as the device's error (the request's 503)."""
    dev = LocalDevice(workdir=tmp_path)
    feed = Feed(dev.name)
    errors: list[str] = []

    def on_line(line: str) -> None:
        try:
            for _ in range(64):  # past the pipe's buffer: the closed end must show
                feed.send("x" * 4096 + "\n")
        except DeviceError as e:
            errors.append(str(e))

    ex = dev.run(["sh", "-c", "exec 0<&-; echo closed; sleep 1"], timeout_s=20, on_line=on_line, feed=feed)
    assert ex.code == 0
    assert errors and "stdin is closed" in errors[0] and "fix:" in errors[0]
