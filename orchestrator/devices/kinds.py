"""The one table of device kinds: how a devices.yaml entry becomes a Device, which runner drives it,
and what such a device is (a phone, a board, a device on this host's CPU). The session, the plan, the
stand-ins and the cluster ask these capabilities (`kind_spec(device.kind).phone`, also of a record's
kind: an outcome's, a DeviceInfo's), never compare a kind's name; a new kind is one module and one row
here. The device modules do not import this one (it imports them, each when a device of its kind is
made: adbutils and asyncssh load only when a phone or a board is in play)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..registry import Registry

if TYPE_CHECKING:
    from .base import Device


@dataclass(frozen=True)
class Kind:
    name: str  # devices.yaml `kind:`
    runner: str  # the RUNNERS entry that drives such a device
    make: Callable[[Mapping[str, Any]], Device]  # a devices.yaml entry -> the device (no I/O)
    phone: bool = False  # a phone: a board may stand in for it when it is absent or lost (fallback.py)
    board: bool = False  # a board: it may stand in for a phone; `edgefarm setup` prepares it
    shares_host_cpu: bool = False  # runs on this host's CPU: several run one after another (plan.host_lanes)


def _adb(entry: Mapping[str, Any]) -> Device:
    from .adb import AdbDevice  # adbutils is imported only when a phone is in play

    return AdbDevice.from_entry(entry)


def _ssh(entry: Mapping[str, Any]) -> Device:
    from .ssh import SshDevice  # asyncssh likewise, only when a board is

    return SshDevice.from_entry(entry)


def _local(entry: Mapping[str, Any]) -> Device:
    from .local import LocalDevice

    return LocalDevice.from_entry(entry)


KINDS = Registry[Kind]("device kind")
KINDS.add("adb", Kind("adb", "android", _adb, phone=True))
KINDS.add("ssh", Kind("ssh", "python", _ssh, board=True))
KINDS.add("local", Kind("local", "python", _local, shares_host_cpu=True))


def kind_spec(name: str) -> Kind:
    """The row of a kind named in a record (an outcome, a DeviceInfo); an unknown name (an older or newer
    edgefarm's file) is none of phone, board, this host, and makes no device."""
    return KINDS.get(name) if name in KINDS else Kind(name, "", lambda entry: KINDS.get(name).make(entry))
