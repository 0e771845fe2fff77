"""A farm's devices run under a record of their conditions (issue 41): this host's load sampled while the
farm runs (telemetry/host_load.py), each device's state at its start, as run.json's `conditions` record
(telemetry/conditions.py). `edgefarm run` and `edgefarm bench` both run their farm through `measured`,
so every run folder carries them."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console

from ..telemetry.conditions import DeviceConditions, DeviceStart, RunConditions
from ..telemetry.host_load import HostLoadSampler
from .local import Farm
from .session import DeviceJob
from .types import DeviceOutcome, Score


def measured(
    farm: Farm,
    devices: Sequence[Any],
    jobs: Mapping[str, DeviceJob],
    console: Console,
    score: Score | None,
    stop: threading.Event,
    run_id: str,
    earlier: RunConditions | None = None,
) -> tuple[list[DeviceOutcome], RunConditions]:
    """`farm.run(...)` with this host sampled around it; the outcomes and the run's conditions (`earlier`:
    a resumed run's, kept for the devices that did not run in this session)."""
    # a local device's runner is found by its job folder in its command line (runners/python_runner.py)
    sampler = HostLoadSampler({d.name: f"/runs/{run_id}/{d.name}/job " for d in devices}).start()
    try:
        outcomes = farm.run(devices, jobs, console, score, stop)
    finally:
        sampler.stop()
    return outcomes, conditions(sampler, outcomes, earlier)


def conditions(
    sampler: HostLoadSampler, outcomes: Sequence[DeviceOutcome], earlier: RunConditions | None
) -> RunConditions:
    """This host over the run, each device's host load while its runner ran here and its state before its
    run (its info's background probe, its first row's snapshot); a device that did not run in this session
    (--resume) keeps what its earlier session recorded."""
    devices = dict(earlier.devices) if earlier is not None else {}
    for o in outcomes:
        first = next((r.thermal_before for r in o.results if r.thermal_before), None)
        now = DeviceConditions(sampler.load(o.name), DeviceStart.of(first, o.info.extra if o.info else None))
        if now != DeviceConditions() or o.name not in devices:
            devices[o.name] = now
    return RunConditions(sampler.load(), devices)
