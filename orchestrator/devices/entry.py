"""A devices.yaml entry's values checked by what they are (pure): a work folder, a host name, an address,
a login name, an adb serial. The kinds' rows (kinds.py) check their own fields with these, devices_yaml.py
the fields every kind has."""

from __future__ import annotations

import ipaddress
import posixpath
import re

_PATH_CHARS = re.compile(r"[A-Za-z0-9_@%+=:,./~-]+")  # a path that needs no quoting anywhere
CONTROL = re.compile(r"[\x00-\x1f\x7f]")
HOSTNAME = re.compile(
    r"(?=.{1,253}\.?\Z)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?\Z"
)
USER = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,31}\Z")  # POSIX login names (useradd's rule, upper case too)
SERIAL = re.compile(r"[A-Za-z0-9._:-]{1,128}\Z")  # adb serials: R58M..., emulator-5554, 10.0.0.5:5555
# folders a workdir may not be (the device's files would be deleted, or mixed into the system's)
SYSTEM_FOLDERS = frozenset((
    "/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/media", "/mnt", "/opt", "/proc",
    "/root", "/run", "/sbin", "/srv", "/sys", "/tmp", "/usr", "/var", "/data", "/data/local", "/data/local/tmp",
    "/sdcard", "/storage", "/system", "/vendor", "/product", "/apex",
))  # fmt: skip
_UNDER_SYSTEM = ("/bin/", "/boot/", "/dev/", "/etc/", "/lib/", "/lib64/", "/proc/", "/sbin/", "/sys/", "/usr/",
                 "/system/", "/vendor/", "/apex/", "/product/")  # fmt: skip


def workdir_problem(value: str, own: str, home: bool = False) -> str | None:
    """Why `value` cannot be a device's work folder (pure), or None. `own`: the kind's hint of a folder of
    edgefarm's own; `home`: the kind's device expands a leading `~/` (this host does)."""
    if CONTROL.search(value):
        return f"{value!r} holds a control character; give a plain absolute path"
    tilde = home and value.startswith("~/")
    if not value.startswith("/") and not tilde:
        return f"{value!r} is not an absolute path; give one such as /home/pi/edgefarm"
    if not _PATH_CHARS.fullmatch(value):
        bad = sorted({c for c in value if not _PATH_CHARS.fullmatch(c)})
        return f"{value!r} holds {' '.join(map(repr, bad))}; use letters, digits and _@%+=:,./~- only"
    normal = posixpath.normpath(value)
    if normal in SYSTEM_FOLDERS or f"{normal}/".startswith(_UNDER_SYSTEM):
        return f"{value!r} is a system folder or inside one; give a folder of edgefarm's own ({own})"
    if normal != (value.rstrip("/") or "/") or "//" in value:
        return f"{value!r} is not normalised (no '.', '..' or '//' parts); write it as {normal!r}"
    return None


def host_problem(value: str) -> str | None:
    """Why `value` is not a host name or an IP address (pure), or None."""
    try:
        ipaddress.ip_address(value)
        return None
    except ValueError:
        pass
    if HOSTNAME.match(value):
        return None
    return f"{value!r} is not a host name or an IP address"


def address_problem(value: str) -> str | None:
    """Why `value` is not HOST:PORT with a port in 1..65535 (an adb server, a Ray head), or None."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isascii() or not port.isdigit():
        return f"{value!r} is not HOST:PORT"
    if not 0 < int(port) < 65536:
        return f"{value!r}: port {port} is outside 1..65535"
    return host_problem(host)
