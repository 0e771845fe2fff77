"""A sync reply cut short (the stream closed: another run, a restarted adb server) is a DeviceError
naming the file, never `struct.error: unpack requires a buffer of 4 bytes` (issue 24). The reader is
adbutils' own connection over a real socket whose far end stops after two bytes."""

from __future__ import annotations

import socket
import threading
from pathlib import PurePosixPath

import pytest
from adbutils._adb import AdbConnection

from orchestrator.devices.adb import read_sync_replies
from orchestrator.errors import DeviceError


@pytest.mark.parametrize("sent", [b"OK", b"OKAY\x00\x00", b"FAIL\x20\x00\x00\x00no spa"])
def test_a_reply_cut_short_is_a_device_error_naming_the_file(sent):
    server = socket.create_server(("127.0.0.1", 0))

    def answer() -> None:
        peer, _ = server.accept()
        peer.sendall(sent)
        peer.close()

    threading.Thread(target=answer, daemon=True).start()
    conn = AdbConnection("127.0.0.1", server.getsockname()[1])
    try:
        with pytest.raises(DeviceError) as e:
            read_sync_replies(
                conn, [PurePosixPath("/data/local/tmp/edgefarm/models/m.litertlm")], "emulator-5554"
            )
    finally:
        conn.close()
        server.close()
    assert "closed in the middle of the reply for /data/local/tmp/edgefarm/models/m.litertlm" in str(e.value)
    assert "no other edgefarm run uses this phone" in str(e.value)
