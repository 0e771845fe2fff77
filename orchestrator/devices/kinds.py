"""The one table of device kinds. A kind is its device module (adb.py, ssh.py, local.py) and its row
here, which holds everything else edgefarm knows of it: how a devices.yaml entry becomes a Device, its
runner, what such a device is (a phone, a board, a device on this host's CPU), its entry's fields in
devices.yaml (schema fragment and value checks: devices_yaml.py builds the schema and runs the checks
from these rows), its work folder's hint, and how attached devices of the kind are found (`discover`,
which inventory.py calls). The session, the plan, the stand-ins, the readiness checks and the cluster
ask these capabilities (`kind_spec(device.kind).phone`, also of a record's kind: an outcome's, a
DeviceInfo's), never compare a kind's name. The device modules do not import this one (it imports
them, each when a device of its kind is made or found: adbutils and asyncssh load only when a phone or
a board is in play)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..registry import Registry
from .entry import CONTROL, SERIAL, USER, address_problem, host_problem

if TYPE_CHECKING:
    from .base import Device
    from .types import DeviceInfo, Inventory

# (field, why it is wrong or None) for each checked field of one devices.yaml entry
Problems = list[tuple[str, "str | None"]]
Discover = Callable[["Inventory", Mapping[str, str]], "tuple[list[Device], list[DeviceInfo]]"]
_PATH = {"type": "string"}


def _no_checks(entry: Mapping[str, Any]) -> Problems:
    return []


@dataclass(frozen=True)
class Kind:
    name: str  # devices.yaml `kind:`
    runner: str  # the RUNNERS entry that drives such a device
    make: Callable[[Mapping[str, Any]], Device]  # a devices.yaml entry -> the device (no I/O)
    phone: bool = False  # a phone: it authorizes this host, reports its power source, and a board may
    # stand in for it when it is absent or lost (fallback.py)
    board: bool = False  # a board: it may stand in for a phone; `edgefarm setup` prepares it
    shares_host_cpu: bool = False  # runs on this host's CPU: several run one after another (plan.host_lanes)
    # devices.yaml: the entry's own fields (JSON Schema properties) beside the ones every kind has, the
    # required ones, the ones that are paths (no control characters), and its values checked by what they are
    fields: Mapping[str, Any] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    checks: Callable[[Mapping[str, Any]], Problems] = _no_checks
    workdir: str = "e.g. /home/<user>/edgefarm"  # a folder of edgefarm's own (a wrong workdir's fix)
    workdir_home: bool = False  # the device expands a leading `~/` in its workdir (this host does)
    discover: Discover | None = None  # attached devices of the kind, found (else: declared in devices.yaml)


def _adb(entry: Mapping[str, Any]) -> Device:
    from .adb import AdbDevice  # adbutils is imported only when a phone is in play

    return AdbDevice.from_entry(entry)


def _ssh(entry: Mapping[str, Any]) -> Device:
    from .ssh import SshDevice  # asyncssh likewise, only when a board is

    return SshDevice.from_entry(entry)


def _local(entry: Mapping[str, Any]) -> Device:
    from .local import LocalDevice

    return LocalDevice.from_entry(entry)


def _adb_checks(entry: Mapping[str, Any]) -> Problems:
    out: Problems = []
    if not SERIAL.match(entry["serial"]):
        out.append(("serial", f"{entry['serial']!r} is not an adb serial (letters, digits, . _ : -)"))
    if isinstance(entry.get("server"), str):
        out.append(("server", address_problem(entry["server"])))
    for j, lib in enumerate(entry.get("libs") or []):
        if isinstance(lib, str) and CONTROL.search(lib):
            out.append((f"libs[{j}]", f"{lib!r} holds a control character"))
    return out


def _ssh_checks(entry: Mapping[str, Any]) -> Problems:
    out: Problems = [("host", host_problem(entry["host"]))]
    if isinstance(entry.get("user"), str) and not USER.match(entry["user"]):
        out.append(("user", f"{entry['user']!r} is not a login name (letters, digits, _ . -)"))
    return out


def _adb_discover(inv: Inventory, env: Mapping[str, str]) -> tuple[list[Device], list[DeviceInfo]]:
    """Phones on the local adb server and every `adb_servers` entry."""
    from .adb_discovery import devices_from_inventory

    return devices_from_inventory(inv.adb_servers, inv.entries, env)  # type: ignore[return-value]


KINDS = Registry[Kind]("device kind")
KINDS.add("adb", Kind(
    "adb", "android", _adb, phone=True,
    fields={"serial": {"type": "string"}, "server": {"type": "string"}, "runner": {"enum": ["native", "upstream"]},
            "runner_path": _PATH, "native_runner": _PATH, "runtime_lib": _PATH,
            "libs": {"type": "array", "items": {"type": "string"}}},
    required=("serial",), paths=("runner_path", "native_runner", "runtime_lib"), checks=_adb_checks,
    workdir="default: /data/local/tmp/edgefarm", discover=_adb_discover,
))  # fmt: skip
KINDS.add("ssh", Kind(
    "ssh", "python", _ssh, board=True,
    fields={"host": {"type": "string"}, "port": {"type": "integer", "minimum": 1, "maximum": 65535},
            "user": {"type": "string"}, "identity_file": _PATH, "known_hosts": _PATH, "python": _PATH},
    required=("host",), paths=("identity_file", "known_hosts", "python"), checks=_ssh_checks,
    workdir="default: /home/<user>/edgefarm",
))  # fmt: skip
KINDS.add("local", Kind(
    "local", "python", _local, shares_host_cpu=True,
    fields={"python": _PATH}, paths=("python",), workdir="e.g. ~/edgefarm", workdir_home=True,
))  # fmt: skip


def kind_spec(name: str) -> Kind:
    """The row of a kind named in a record (an outcome, a DeviceInfo); an unknown name (an older or newer
    edgefarm's file) is none of phone, board, this host, and makes no device."""
    return KINDS.get(name) if name in KINDS else Kind(name, "", lambda entry: KINDS.get(name).make(entry))


def first_kind(capability: str) -> str:
    """The name of the first kind with `capability` ("phone", "board"): what a record names when the
    device it speaks of was never seen (a phone absent from the start)."""
    return next(n for n in KINDS if getattr(KINDS.get(n), capability))
