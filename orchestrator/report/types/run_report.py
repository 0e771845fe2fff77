"""The combined run report: the run stamp, one DeviceRow per device, one SampleRow per sample and the
figures across devices (disagreements, paired comparisons, --sustain, --fidelity, the matrix, --units);
every printer renders from it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .device_row import DeviceRow
from .disagreements import Disagreements
from .fidelity import FidelityReport
from .matrix import BackendMatrix
from .paired import Paired
from .sample_row import SampleRow
from .units import UnitGroup


@dataclass(frozen=True)
class RunStamp:
    """What ran, where and when: the same block heads every format."""

    model_path: str = ""
    model_size_bytes: int | None = None
    model_sha256: str = ""
    dataset_path: str = ""
    dataset_format: str = ""
    dataset_sha256: str = ""
    samples_run: int | None = None
    samples_total: int | None = None
    skipped: Mapping[str, int] = field(default_factory=dict)  # device -> samples not scored
    started_at: str = ""
    finished_at: str = ""
    host: str = ""
    versions: Mapping[str, str] = field(default_factory=dict)
    backends: tuple[str, ...] = ()
    flags: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RunReport:
    schema_version: int
    run_id: str
    run: Mapping[str, Any]  # run.json content (model, dataset, flags, versions, host)
    devices: tuple[DeviceRow, ...]
    samples: tuple[SampleRow, ...] = ()
    unusable: tuple[Mapping[str, Any], ...] = ()
    notes: tuple[str, ...] = ()
    stamp: RunStamp = field(default_factory=RunStamp)
    disagreements: Disagreements = field(default_factory=Disagreements)
    baseline: str = ""  # the device the others are compared with (--baseline; else the first)
    paired: tuple[Paired, ...] = ()  # every other device against the baseline
    host_sharing: tuple[Mapping[str, Any], ...] = ()  # run.json: devices sharing this host's CPU
    sustain: Mapping[str, Any] = field(default_factory=dict)  # --sustain: device -> curve (sustain.py)
    fidelity: FidelityReport | None = None  # --fidelity runs only (report/fidelity.py)
    matrix: BackendMatrix | None = None  # a run of several backends per device (report/matrix.py)
    units: tuple[UnitGroup, ...] = ()  # --units runs only (report/units.py)
