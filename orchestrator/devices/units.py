"""A device x backend unit of a matrix run (issue 44, docs/matrix.md): `pixel-8@gpu` is pixel-8 running
the gpu backend. Each unit is a lane entry of its own with its own device folder (runs/ID/pixel-8@gpu/);
the units of one phone run one after another on it (one model load each), and share its staging (the
model's place on the phone is by content, so the second backend pushes no model byte).

The one home of the unit's name: `@` is not in a device name (devices_yaml.NAME_PATTERN), so a name
splits back into its device and backend without a table."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from android_runner.backend import BACKENDS

from .base import Device

SEP = "@"
MAX_BACKENDS = len(BACKENDS)  # a device runs each backend at most once in a run


def unit_name(device: str, backend: str) -> str:
    return f"{device}{SEP}{backend}"


def split_unit(name: str) -> tuple[str, str]:
    """`pixel-8@gpu` -> ("pixel-8", "gpu"); a plain device name -> (name, "")."""
    device, sep, backend = name.rpartition(SEP)
    return (device, backend) if sep and backend in BACKENDS else (name, "")


def job_folder(name: str) -> str:
    """A phone's job folder under runs/ID/: `job`, a unit's `job@gpu` (its results never mix with the
    phone's other backends' in the same run)."""
    backend = split_unit(name)[1]
    return f"job{SEP}{backend}" if backend else "job"


def as_unit(device: Device, backend: str) -> Device:
    """The device as one unit of a matrix run: the same connection and work folder (so the same
    one-run lock and staged files), its own name (its folder, progress bar, report row) and backend.
    A shallow copy: a unit holds no state of its own but its name, backend and push sink."""
    unit = copy.copy(device)
    unit.name = unit_name(device.name, backend)
    unit.backend = backend
    unit.on_progress = None
    return unit


def parse_backends(text: str | None) -> tuple[str, ...]:
    """`--backend cpu,gpu` -> ("cpu", "gpu"): in the order given, each once; () for None. Raises
    ValueError naming the word that is not a backend."""
    if not text:
        return ()
    words = [w.strip().lower() for w in text.split(",")]
    bad = [w for w in words if w not in BACKENDS]
    if bad:
        raise ValueError(
            f"{bad[0]!r} is not a backend (one or more of {', '.join(BACKENDS)}, comma-separated)"
        )
    return tuple(dict.fromkeys(words))


def declared_backends(entries: Sequence[Mapping[str, Any]], name: str) -> tuple[str, ...]:
    """devices.yaml `backends: [cpu, gpu]` of the entry named `name` (() when it has none)."""
    entry = next((e for e in entries if e.get("name") == name), None)
    return tuple(entry.get("backends") or ()) if entry is not None else ()


def units_of(
    devices: Sequence[Device], asked: str | None, entries: Sequence[Mapping[str, Any]]
) -> tuple[Device, ...]:
    """The devices, or, when one is to run more than one backend (`--backend cpu,gpu`, or devices.yaml
    `backends:`), every device as its units in the order asked (a device with one backend is a unit too:
    pixel-8@cpu), so a matrix has a row per device and a column per backend. Each device's backends:
    --backend's list, else its `backends:`, else its `backend:`, else cpu (`edgefarm run` and `serve`)."""
    listed = parse_backends(asked)
    each = {d.name: listed or declared_backends(entries, d.name) or (d.backend or "cpu",) for d in devices}
    if all(len(b) == 1 for b in each.values()):
        return tuple(devices)
    return tuple(as_unit(d, b) for d in devices for b in each[d.name])


def backend_asked(device: Device, asked: str | None) -> str | None:
    """The backend override a device gets (RunOptions.for_device): a unit's own, else --backend."""
    return device.backend if split_unit(device.name)[1] else asked


__all__ = [
    "SEP",
    "as_unit",
    "backend_asked",
    "declared_backends",
    "job_folder",
    "parse_backends",
    "split_unit",
    "unit_name",
    "units_of",
]
