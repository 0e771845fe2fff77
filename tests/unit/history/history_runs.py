"""Run reports for the history's unit tests: a device's rows with a known time per sample, built
through the report's own code (combine.device_row, build_report)."""

from __future__ import annotations

import random

from android_runner.contract import SampleResult
from orchestrator.devices.types import DeviceInfo
from orchestrator.farm.run_json import RunJson
from orchestrator.farm.types import DeviceOutcome
from orchestrator.report.combine import build_report, device_row, sample_rows


def rows(ms: float, n: int = 12, seed: int = 0) -> list[SampleResult]:
    rng = random.Random(seed)
    return [SampleResult(id=f"s{i}", status="ok", output="yes", ttft_ms=ms / 2 * rng.uniform(0.995, 1.005),
                         wall_ms=ms * rng.uniform(0.995, 1.005), decode_tps=20.0, prefill_tps=100.0)
            for i in range(n)]  # fmt: skip


def report(run_id: str, started: str, per_device: dict[str, float], runtime: str = "0.17.0", seed: int = 0,
           model_sha: str = "a" * 64, other_cores: float | None = None):  # fmt: skip
    """A run of these devices (name -> ms per sample), each on runtime `runtime`."""
    run = {
        "run_id": run_id, "started_at": started, "finished_at": started,
        "model": {"path": "/m/tiny.litertlm", "sha256": model_sha}, "dataset": {"path": "/d", "sha256": "b" * 64,
        "sample_ids": [f"s{i}" for i in range(12)]}, "flags": {"threads": 2},
        "versions": {"edgefarm": "0.1.0"},
        "device_versions": {n: {"runner": "native", "runner_sha256": "c" * 64, "runtime_version": runtime,
                                "runtime_sha256": runtime.replace(".", "") * 8} for n in per_device},
    }  # fmt: skip
    if (
        other_cores is not None
    ):  # run.json `conditions` (telemetry/conditions.py): this host's load over the run
        run["conditions"] = {
            "host": {"seconds": 5.0, "ticks": 10, "cpus": 2, "other_cores_mean": other_cores}
        }
    per = {n: (rows(ms, seed=seed + i), None) for i, (n, ms) in enumerate(per_device.items())}
    devs = [device_row(DeviceInfo.from_dict({"name": n, "model": "Pixel"}), DeviceOutcome(name=n, kind="adb"), r, rep)
            for n, (r, rep) in per.items()]  # fmt: skip
    return build_report(RunJson.from_dict(run), devs, sample_rows(per))
