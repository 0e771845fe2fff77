"""The measurement stamp of one device's run: what the run USED there, so every figure means the same.

outcome.json's `runner` record holds the runner's identity (name, runner and runtime sha256 and
version, from the runner's `stage`) and, from here, the settings that change speed and the device's
state at the start and end of its samples; device.json shows the backend and threads the run used
(the command line's, over devices.yaml's, which are kept beside them). Pure.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from android_runner.contract import JobItem, SampleResult

from ..devices.types import DeviceInfo
from ..models import ModelSummary
from .base import RunOptions

CACHE_NOTE = "per-model folder on the device (<workdir>/cache/<model sha256[:16]>), kept between runs"


def effective_info(info: DeviceInfo, opts: RunOptions) -> DeviceInfo:
    """device.json: backend/threads as the run used them; devices.yaml's values as `inventory_*`."""
    extra = dict(info.extra)
    extra.update(
        backend=opts.backend,
        threads=opts.threads,
        inventory_backend=info.extra.get("backend"),
        inventory_threads=info.extra.get("threads"),
    )
    return replace(info, extra=extra)


def run_settings(opts: RunOptions, model: ModelSummary, items: Sequence[JobItem]) -> dict[str, Any]:
    """Every runtime setting of this device's run that changes speed (threads None = runtime default)."""
    samplers = sorted({json.dumps(dict(it.sampler), sort_keys=True) for it in items})
    return {
        "backend": opts.backend,
        "threads": opts.threads,
        "max_num_tokens": opts.max_num_tokens or model.max_context_tokens,
        "max_num_tokens_from": "run option" if opts.max_num_tokens else "model metadata (runtime default)",
        "vision_backend": "cpu" if model.vision else None,
        "audio_backend": "cpu" if model.audio else None,
        "cache": CACHE_NOTE,
        "samplers": [json.loads(s) for s in samplers],
        "max_output_tokens": sorted({it.max_output_tokens for it in items}),
        "model_sha256": model.sha256,
    }


def _state(snapshot: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Only the state fields (phones: battery level/temperature, thermal status; boards: zones)."""
    if not snapshot:
        return None
    keys = (
        "battery_pct",
        "battery_temp_c",
        "thermal_status",
        "max_temp_c",
        "zones",
        "cpu_mhz",
        "vc_temp_c",
        "throttled",
    )
    return {k: snapshot[k] for k in keys if k in snapshot}


def state_span(results: Sequence[SampleResult]) -> dict[str, Any]:
    """Thermal state and battery level before the first sample and after the last one that reported it."""
    before = [r.thermal_before for r in results if r.thermal_before]
    after = [r.thermal_after for r in results if r.thermal_after]
    return {"start": _state(before[0] if before else None), "end": _state(after[-1] if after else None)}


IDENTITY_KEYS = ("runner", "runner_sha256", "runtime", "runtime_version", "runtime_sha256")


def device_versions(runner_records: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """run.json `device_versions`: each device's runner and runtime identity (device name -> record),
    beside the host's `versions`."""
    return {
        name: {k: rec[k] for k in IDENTITY_KEYS if rec.get(k)}
        for name, rec in sorted(runner_records.items())
        if rec
    }
