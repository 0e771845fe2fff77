"""A finished run's report -> its record for the results database (pure).

The comparable configuration of a device (`device_config`): the model (by name: a new build of it,
another sha256, stays comparable), the dataset and its slice, the shape, and every setting the
figures depend on (backend asked, threads, token caps, runner kind, --repeat/--warmup/--sustain).
The runtime, runner and model versions are NOT in it: comparing across them is the point.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from ..devices.units import split_unit
from ..report.facts import run_conditions
from ..report.types.device_row import DeviceRow
from ..report.types.run_report import RunReport
from ..report.types.sample_row import SampleCell
from ..telemetry.conditions import RunConditions
from .types import FIGURE_NAMES, SAMPLE_FIELDS, DeviceEntry, Figure, Identity, RunEntry, kept_cell


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def sample_ids(report: RunReport) -> list[str]:
    ids = (report.run.get("dataset") or {}).get("sample_ids")
    return [str(i) for i in ids] if isinstance(ids, list) else [s.id for s in report.samples]


def shape(count: int) -> str:
    """A run's shape: its sample count (`12 samples`); which samples is the slice's sha256."""
    return f"{count} samples"


def device_config(report: RunReport, row: DeviceRow, slice_sha256: str, run_shape: str) -> dict[str, Any]:
    flags = report.run.get("flags") if isinstance(report.run.get("flags"), Mapping) else {}
    settings = {k: flags.get(k) for k in ("warmup", "sustain", "max_num_tokens") if flags.get(k)}
    return {
        "model": PurePath(report.stamp.model_path).name,
        "dataset_sha256": report.stamp.dataset_sha256,
        "slice_sha256": slice_sha256,
        "shape": run_shape,
        # a matrix run's unit (pixel-8@gpu) asked its own backend, not the run's list (docs/matrix.md)
        "backend": split_unit(row.device)[1]
        or row.backend_requested
        or str(flags.get("backend") or "")
        or row.backend,
        "threads": row.threads,
        "max_output_tokens": row.max_output_tokens,
        "runner": row.runner_kind,
        "repeat": row.repeat or 1,
        **settings,
    }


def _cells(report: RunReport, device: str) -> dict[str, SampleCell]:
    return {s.id: s.cells[device] for s in report.samples if device in s.cells}


def _figures(row: DeviceRow) -> dict[str, Figure]:
    """The row's figures the database keeps (catalogue HISTORY), each with its 95% interval."""
    out = {}
    for name in FIGURE_NAMES:
        ci = row.intervals.get(name)
        out[name] = Figure(getattr(row, name), *(ci if ci else (None, None)))
    return {k: v for k, v in out.items() if v.value is not None}


def run_entry(report: RunReport, folder: str, identities: Mapping[str, Mapping[str, Any]]) -> RunEntry:
    """The run's record; `identities`: device -> its runner's stamp (runners/stamp.py IDENTITY_KEYS)."""
    stamp = report.stamp
    ids = sample_ids(report)
    slice_sha = sha256_text("\n".join(ids))
    run_shape = shape(len(ids))
    devices = []
    for row in report.devices:
        ident = Identity.from_stamp(identities.get(row.device))
        config = device_config(report, row, slice_sha, run_shape)
        cells = _cells(report, row.device)
        devices.append(DeviceEntry(
            device=row.device, kind=row.kind, hardware=row.hardware, soc=row.soc, backend=row.backend,
            runner=ident.runner or row.runner_kind or "", runner_sha256=ident.runner_sha256,
            runtime_version=ident.runtime_version, runtime_sha256=ident.runtime_sha256,
            config=config, config_key=sha256_text(canonical(config))[:16], error=row.error,
            figures=_figures(row), samples={i: kept_cell({f: getattr(c, f) for f in SAMPLE_FIELDS}) for i, c in cells.items()},
            context_tokens=ident.context_tokens,
        ))  # fmt: skip
    versions = dict(stamp.versions)
    return RunEntry(
        run_id=report.run_id, kind="run", started_at=stamp.started_at, finished_at=stamp.finished_at,
        folder=folder, host=stamp.host, edgefarm_version=str(versions.get("edgefarm") or ""),
        edgefarm_git=str(versions.get("edgefarm_git") or ""), model_name=PurePath(stamp.model_path).name,
        model_sha256=stamp.model_sha256, dataset_path=stamp.dataset_path, dataset_sha256=stamp.dataset_sha256,
        slice_sha256=slice_sha, samples=len(ids), shape=run_shape, flags=dict(stamp.flags), versions=versions,
        devices=tuple(devices), model_size_bytes=as_int(stamp.model_size_bytes),
        quantization=next((r.quantization for r in report.devices if r.quantization), ""),
        conditions=conditions_json(run_conditions(report)),
    )  # fmt: skip


def conditions_json(conditions: RunConditions | None) -> str:
    return "" if conditions is None else canonical(conditions.to_dict())


def condition_problems(stored: str, device: str) -> tuple[str, ...]:
    """The problems of a run's conditions (RunConditions.problems, their rules) that concern `device`:
    this host's load, and what names the device; '' (not recorded): none."""
    if not stored:
        return ()
    conditions = RunConditions.from_dict(json.loads(stored))
    if conditions is None:
        return ()
    return tuple(
        p for p in conditions.problems() if "this host" in p or re.search(rf"\b{re.escape(device)}\b", p)
    )


def record_sha256(entry: RunEntry) -> str:
    """The record's content hash: an unchanged run imported again is recognised by it. Encoded
    straight from the records (their fields through `vars`), not through dataclasses.asdict, whose
    deep copies took 140 s of a 180,000-sample record's 170 s."""
    text = json.dumps(entry, default=vars, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return sha256_text(text)


def as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def device_identities(run: Mapping[str, Any], outcomes: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """device -> runner stamp: the device's outcome.json `runner` (identity and settings), run.json's
    `device_versions` over it."""
    recorded = run.get("device_versions") if isinstance(run.get("device_versions"), Mapping) else {}
    names = set(outcomes) | set(recorded)
    return {n: {**(outcomes.get(n) or {}), **(recorded.get(n) or {})} for n in names}
