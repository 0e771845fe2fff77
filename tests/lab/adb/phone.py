"""An emulated phone: the DEVICE side of the ADB transport protocol over TCP.

A real adb server connects to it (`adb connect 127.0.0.1:PORT`) and then drives it like a phone.
Services: `shell,v2[,...]:` (stdout/stderr/exit packets), plain `shell:` (merged, raw) and
`sync:` (SEND/RECV/STAT/LIST/DONE/QUIT). Shell commands run in a bubblewrap sandbox (see
sandbox.py) where /data is the phone's own folder. One thread per connection and per stream;
only one unacknowledged WRTE per stream and direction (that is ADB's flow control).
"""

from __future__ import annotations

import os
import queue
import random
import signal
import socket
import stat
import struct
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

A_CNXN, A_AUTH, A_OPEN, A_OKAY, A_CLSE, A_WRTE = (
    0x4E584E43,
    0x48545541,
    0x4E45504F,
    0x59414B4F,
    0x45534C43,
    0x45545257,
)
VERSION = 0x01000001
MAX_PAYLOAD = 1 << 20
AUTH_TOKEN, AUTH_SIGNATURE, AUTH_RSAPUBLICKEY = 1, 2, 3
SYNC_CHUNK = 64 * 1024


def _pack(cmd: int, arg0: int, arg1: int, payload: bytes = b"") -> bytes:
    return struct.pack("<6I", cmd, arg0, arg1, len(payload), 0, cmd ^ 0xFFFFFFFF) + payload


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("peer closed")
        buf += chunk
    return bytes(buf)


def free_port(low: int = 40000, high: int = 59999) -> int:
    """A free loopback port >= 40000 (nothing there looks like an `emulator-N`)."""
    for _ in range(200):
        port = random.randint(low, high)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise RuntimeError("no free port in range")


class _Stream:
    """One open service: inbound data queue, an OKAY semaphore for our writes, a closed flag."""

    def __init__(self, conn: _Connection, local_id: int, remote_id: int) -> None:
        self.conn = conn
        self.local_id = local_id
        self.remote_id = remote_id
        self.inbox: queue.Queue[bytes | None] = queue.Queue()
        self.acked = threading.Semaphore(1)
        self.closed = threading.Event()
        self.send_lock = threading.Lock()
        self.proc: subprocess.Popen | None = None

    def write(self, data: bytes) -> bool:
        """Send data as WRTEs, each after the previous one was acknowledged. False if closed."""
        with self.send_lock:
            for i in range(0, len(data), self.conn.max_payload):
                while not self.acked.acquire(timeout=0.2):
                    if self.closed.is_set():
                        return False
                if self.closed.is_set():
                    return False
                chunk = data[i : i + self.conn.max_payload]
                if not self.conn.send(A_WRTE, self.local_id, self.remote_id, chunk):
                    return False
        return True

    def read(self, timeout: float | None = None) -> bytes | None:
        """Next host payload (OKAY is sent once we took it), or None once closed."""
        while True:
            try:
                data = self.inbox.get(timeout=0.2 if timeout is None else timeout)
            except queue.Empty:
                if self.closed.is_set() or timeout is not None:
                    return None
                continue
            if data is None:
                return None
            self.conn.send(A_OKAY, self.local_id, self.remote_id)
            return data

    def close(self) -> None:
        if not self.closed.is_set():
            self.closed.set()
            self.conn.send(A_CLSE, self.local_id, self.remote_id)
        self.conn.forget(self.local_id)
        self.kill()

    def kill(self) -> None:
        proc = self.proc
        if self.conn.phone.unplug_keeps_processes:  # a real phone: the command outlives the connection
            return
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


class _Connection(threading.Thread):
    """One TCP connection from an adb server."""

    def __init__(self, phone: FakePhone, sock: socket.socket) -> None:
        super().__init__(daemon=True, name=f"adb-conn-{phone.name}")
        self.phone = phone
        self.sock = sock
        self.lock = threading.Lock()
        self.streams: dict[int, _Stream] = {}
        self.next_id = 1
        self.max_payload = 256 * 1024
        self.dead = False

    def send(self, cmd: int, arg0: int, arg1: int, payload: bytes = b"") -> bool:
        with self.lock:
            if self.dead:
                return False
            try:
                self.sock.sendall(_pack(cmd, arg0, arg1, payload))
                return True
            except OSError:
                self.dead = True
                return False

    def forget(self, local_id: int) -> None:
        self.streams.pop(local_id, None)

    def shutdown(self) -> None:
        self.dead = True
        for stream in list(self.streams.values()):
            stream.closed.set()
            stream.kill()
            stream.inbox.put(None)
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()

    def run(self) -> None:
        try:
            while not self.dead:
                header = _recv_exact(self.sock, 24)
                cmd, arg0, arg1, length, _crc, _magic = struct.unpack("<6I", header)
                payload = _recv_exact(self.sock, length) if length else b""
                self.dispatch(cmd, arg0, arg1, payload)
        except (ConnectionError, OSError):
            pass
        finally:
            self.shutdown()

    def dispatch(self, cmd: int, arg0: int, arg1: int, payload: bytes) -> None:
        phone = self.phone
        if cmd == A_CNXN:
            self.max_payload = max(4096, min(arg1 or MAX_PAYLOAD, 256 * 1024))
            if phone.unauthorized:
                self.send(A_AUTH, AUTH_TOKEN, 0, os.urandom(20))
            else:
                self.send(A_CNXN, VERSION, MAX_PAYLOAD, phone.banner().encode())
        elif cmd == A_AUTH:
            if arg0 == AUTH_SIGNATURE:  # every key the server tries is "wrong": ask again
                self.send(A_AUTH, AUTH_TOKEN, 0, os.urandom(20))
            # AUTH_RSAPUBLICKEY: a real phone shows the prompt now; nobody accepts it.
        elif cmd == A_OPEN:
            if phone.unauthorized:
                self.send(A_CLSE, 0, arg0)
                return
            service = payload.rstrip(b"\0").decode("utf-8", "replace")
            local_id = self.next_id
            self.next_id += 1
            stream = _Stream(self, local_id, arg0)
            handler = phone.handler_for(service)
            if handler is None:
                self.send(A_CLSE, 0, arg0)
                return
            self.streams[local_id] = stream
            self.send(A_OKAY, local_id, arg0)
            threading.Thread(target=self._serve, args=(handler, stream), daemon=True).start()
        elif cmd == A_OKAY:
            stream = self.streams.get(arg1)
            if stream is not None:
                stream.acked.release()
        elif cmd == A_WRTE:
            stream = self.streams.get(arg1)
            if stream is None:
                self.send(A_CLSE, arg1, arg0)
            else:
                stream.inbox.put(payload)
        elif cmd == A_CLSE:
            stream = self.streams.pop(arg1, None)
            if stream is not None:
                stream.closed.set()
                stream.inbox.put(None)
                stream.kill()

    @staticmethod
    def _serve(handler: Callable[[_Stream], None], stream: _Stream) -> None:
        try:
            handler(stream)
        except (ConnectionError, OSError):
            pass  # the host went away mid-request
        finally:
            stream.close()


class FakePhone:
    """A phone on 127.0.0.1:port. `unauthorized=True` answers AUTH instead of CNXN; `vanish()`
    drops every connection and refuses new ones, like a pulled cable."""

    def __init__(
        self,
        name: str,
        props: dict[str, str],
        *,
        root: Path,
        sandbox_argv: Callable[[str], list[str]],
        unauthorized: bool = False,
        port: int | None = None,
    ) -> None:
        self.name = name
        self.props = props
        self.root = root
        self.sandbox_argv = sandbox_argv
        self.unauthorized = unauthorized
        self.unplug_keeps_processes = False  # True: commands keep running after vanish() or a host CLSE
        self.port = port or free_port()
        self.sessions: set[int] = set()  # live shell commands, each its own session (the lab gauge's CPU)
        self._listener: socket.socket | None = None
        self._conns: list[_Connection] = []
        self._stopped = threading.Event()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def banner(self) -> str:
        p = self.props
        return (
            f"device::ro.product.name={p.get('ro.product.name', '')};"
            f"ro.product.model={p.get('ro.product.model', '')};"
            f"ro.product.device={p.get('ro.product.device', '')};"
            "features=shell_v2,fixed_push_mkdir,edgefarm_lab"
        )

    # ---------------------------------------------------------------- lifecycle

    def start(self) -> FakePhone:
        self._stopped.clear()
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", self.port))
        s.listen(8)
        self._listener = s
        threading.Thread(target=self._accept, args=(s,), daemon=True, name=f"adb-listen-{self.name}").start()
        return self

    def _accept(self, listener: socket.socket) -> None:
        while not self._stopped.is_set():
            try:
                sock, _ = listener.accept()
            except OSError:
                return
            if listener is not self._listener:  # vanished meanwhile: a pulled cable takes no calls
                sock.close()
                return
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn = _Connection(self, sock)
            self._conns.append(conn)
            conn.start()

    def vanish(self) -> None:
        """Pull the cable: close the listener and every connection, kill running commands."""
        self._stopped.set()
        listener, self._listener = self._listener, None
        if listener is not None:
            try:  # close() alone leaves a blocked accept() listening: the server would re-attach
                listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            listener.close()
        for conn in self._conns:
            conn.shutdown()
        self._conns.clear()

    stop = vanish

    @property
    def vanished(self) -> bool:
        """True after vanish() until start() plugs it back in (same port, same /data)."""
        return self._listener is None

    # ---------------------------------------------------------------- services

    def handler_for(self, service: str) -> Callable[[_Stream], None] | None:
        if service.startswith("shell,"):
            opts, _, command = service.partition(":")
            return lambda s: self._shell(s, command, v2="v2" in opts.split(","))
        if service.startswith("shell:"):
            return lambda s: self._shell(s, service[len("shell:") :], v2=False)
        if service.startswith("sync:"):
            return self._sync
        return None

    def _shell(self, stream: _Stream, command: str, *, v2: bool) -> None:
        argv = self.sandbox_argv(command or "exec sh")
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if v2 else subprocess.STDOUT,
            start_new_session=True,
        )
        stream.proc = proc
        self.sessions.add(proc.pid)
        if stream.closed.is_set():
            stream.kill()

        def pump(pipe, packet_id: int) -> None:
            while True:
                data = pipe.read1(64 * 1024)
                if not data:
                    return
                frame = struct.pack("<BI", packet_id, len(data)) + data if v2 else data
                if not stream.write(frame):
                    stream.kill()
                    return

        def feed_stdin() -> None:
            buf = b""
            while True:
                data = stream.read()
                if data is None:
                    break
                if not v2:
                    _safe_write(proc.stdin, data)
                    continue
                buf += data
                while len(buf) >= 5:
                    pid, length = struct.unpack("<BI", buf[:5])
                    if len(buf) < 5 + length:
                        break
                    body, buf = buf[5 : 5 + length], buf[5 + length :]
                    if pid == 0:
                        _safe_write(proc.stdin, body)
                    elif pid == 4:
                        _safe_close(proc.stdin)
            _safe_close(proc.stdin)

        threading.Thread(target=feed_stdin, daemon=True).start()
        pumps = [threading.Thread(target=pump, args=(proc.stdout, 1), daemon=True)]
        if v2:
            pumps.append(threading.Thread(target=pump, args=(proc.stderr, 2), daemon=True))
        for t in pumps:
            t.start()
        for t in pumps:
            t.join()
        rc = proc.wait()
        self.sessions.discard(proc.pid)
        if rc < 0:
            rc = 128 - rc
        if v2 and not stream.closed.is_set():
            stream.write(struct.pack("<BI", 3, 1) + bytes([rc & 0xFF]))

    # ---------------------------------------------------------------- sync

    def host_path(self, device_path: str) -> Path:
        """Device path -> host path: /data/... is the phone's own; the rest is the read-only host."""
        norm = os.path.normpath("/" + device_path.lstrip("/"))
        if norm == "/data" or norm.startswith("/data/"):
            return self.root / norm.lstrip("/")
        return Path(norm)

    def _writable(self, device_path: str) -> bool:
        norm = os.path.normpath("/" + device_path.lstrip("/"))
        return norm.startswith("/data/")

    def _sync(self, stream: _Stream) -> None:
        reader = _SyncReader(stream)
        while True:
            req = reader.header()
            if req is None:
                return
            rid, length = req
            if rid == b"QUIT":
                return
            path = reader.take(length).decode("utf-8", "replace")
            if rid == b"STAT":
                try:
                    st = os.lstat(self.host_path(path))
                    reply = b"STAT" + struct.pack(
                        "<III", st.st_mode, st.st_size & 0xFFFFFFFF, int(st.st_mtime)
                    )
                except OSError:
                    reply = b"STAT" + struct.pack("<III", 0, 0, 0)
                stream.write(reply)
            elif rid == b"LIST":
                self._sync_list(stream, path)
            elif rid == b"RECV":
                self._sync_recv(stream, path)
            elif rid == b"SEND":
                if not self._sync_send(stream, reader, path):
                    return
            else:
                stream.write(b"FAIL" + _lenmsg(f"unknown sync request {rid!r}"))
                return

    def _sync_list(self, stream: _Stream, path: str) -> None:
        host = self.host_path(path)
        out = bytearray()
        try:
            names = sorted(os.listdir(host))
        except OSError:
            names = []
        for name in names:
            try:
                st = os.lstat(host / name)
            except OSError:
                continue
            raw = name.encode()
            out += b"DENT" + struct.pack(
                "<IIII", st.st_mode, st.st_size & 0xFFFFFFFF, int(st.st_mtime), len(raw)
            )
            out += raw
        out += b"DONE" + bytes(16)
        stream.write(bytes(out))

    def _sync_recv(self, stream: _Stream, path: str) -> None:
        host = self.host_path(path)
        try:
            f = open(host, "rb")  # noqa: SIM115 - closed by the with below
        except OSError as e:
            stream.write(b"FAIL" + _lenmsg(f"open failed: {e.strerror}"))
            return
        with f:
            while True:
                chunk = f.read(SYNC_CHUNK)
                if not chunk:
                    break
                if not stream.write(b"DATA" + struct.pack("<I", len(chunk)) + chunk):
                    return
        stream.write(b"DONE" + bytes(4))

    def _sync_send(self, stream: _Stream, reader: _SyncReader, spec: str) -> bool:
        path, _, mode_s = spec.rpartition(",")
        try:
            mode = int(mode_s)
        except ValueError:
            path, mode = spec, 0o644
        failure = "" if self._writable(path) else f"couldn't create file: Read-only file system ({path})"
        host = self.host_path(path)
        f = None
        if not failure:
            try:
                host.parent.mkdir(parents=True, exist_ok=True)
                tmp = host.with_name(host.name + ".edgefarm-lab-part")
                f = open(tmp, "wb")  # noqa: SIM115 - spans several sync requests
            except OSError as e:
                failure = f"couldn't create file: {e.strerror}"
        while True:
            req = reader.header()
            if req is None:
                if f:
                    f.close()
                return False
            rid, length = req
            if rid == b"DATA":
                data = reader.take(length)
                if f:
                    f.write(data)
            elif rid == b"DONE":
                if f:
                    f.close()
                    os.chmod(tmp, stat.S_IMODE(mode) or 0o644)
                    os.replace(tmp, host)
                    os.utime(host, (length, length))
                    stream.write(b"OKAY" + bytes(4))
                else:
                    stream.write(b"FAIL" + _lenmsg(failure))
                return True
            else:
                if f:
                    f.close()
                stream.write(b"FAIL" + _lenmsg(f"unexpected {rid!r} during SEND"))
                return False


class _SyncReader:
    """Sync requests arrive split at any byte boundary: buffer the stream."""

    def __init__(self, stream: _Stream) -> None:
        self.stream = stream
        self.buf = bytearray()

    def _fill(self, n: int) -> bool:
        while len(self.buf) < n:
            data = self.stream.read()
            if data is None:
                return False
            self.buf += data
        return True

    def header(self) -> tuple[bytes, int] | None:
        if not self._fill(8):
            return None
        rid, length = bytes(self.buf[:4]), struct.unpack("<I", self.buf[4:8])[0]
        del self.buf[:8]
        return rid, length

    def take(self, n: int) -> bytes:
        if not self._fill(n):
            raise ConnectionError("sync stream closed mid-request")
        data = bytes(self.buf[:n])
        del self.buf[:n]
        return data


def _lenmsg(msg: str) -> bytes:
    raw = msg.encode()
    return struct.pack("<I", len(raw)) + raw


def _safe_write(pipe, data: bytes) -> None:
    try:
        pipe.write(data)
        pipe.flush()
    except (BrokenPipeError, ValueError, OSError):
        pass


def _safe_close(pipe) -> None:
    try:
        pipe.close()
    except (BrokenPipeError, ValueError, OSError):
        pass
