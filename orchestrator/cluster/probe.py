"""Is there a Ray head at HOST:PORT? A bounded probe before Ray is asked (no Ray import).

Ray's own join retries an address for minutes, with its C++ warnings on the screen, whether nothing
listens there or something that is not a head does. A Ray head's GCS is a gRPC server: HTTP/2
without TLS, which answers a client's connection preface with its own SETTINGS frame (RFC 9113
section 3.4). So: a TCP connect, the preface, and the server's first frame, all within
HEAD_CONNECT_S; anything else is named as not a head."""

from __future__ import annotations

import os
import socket
import time

from .types import ClusterError

HEAD_CONNECT_S = 10.0
H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
H2_EMPTY_SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"  # length 0, type SETTINGS, no flags, stream 0
H2_SETTINGS = 0x4


def head_problem(address: str, timeout_s: float = HEAD_CONNECT_S) -> str:
    """Why `address` is not a Ray head's GCS ('' when it answers as one), within `timeout_s` in all:
    a TCP connect, the HTTP/2 preface, and the server's first frame, which must be SETTINGS on stream 0.
    With RAY_USE_TLS=1 the GCS speaks TLS first: only the connect is checked."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        return "not HOST:PORT"
    deadline = time.monotonic() + timeout_s
    try:
        conn = socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s)
    except (OSError, OverflowError) as e:
        return getattr(e, "strerror", None) or str(e)
    with conn:
        if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
            return ""
        try:
            conn.sendall(H2_PREFACE + H2_EMPTY_SETTINGS)
            head = b""
            while len(head) < 9:
                conn.settimeout(max(0.01, deadline - time.monotonic()))
                data = conn.recv(9 - len(head))
                if not data:
                    break
                head += data
        except TimeoutError:
            return f"it accepted the connection but sent nothing within {timeout_s:g} s: not a Ray head"
        except OSError as e:
            return f"it accepted the connection, then {e.strerror or e}: not a Ray head"
    if len(head) == 9 and head[3] == H2_SETTINGS and head[5:9] == b"\x00\x00\x00\x00":
        return ""
    shown = head[:9].decode("latin-1").encode("unicode_escape").decode("ascii")
    return f"it sent {shown!r}, not an HTTP/2 SETTINGS frame: not a Ray head"


def require_head(address: str) -> None:
    """A ClusterError naming the address and the fix unless a Ray head answers there."""
    why = head_problem(address)
    if why:
        raise ClusterError(
            f"the Ray head at {address} does not answer ({why})",
            where=f"--cluster {address}",
            fix="start the head with `ray start --head --port=6379` and pass HOST:6379 (docs/cluster.md)",
        )
