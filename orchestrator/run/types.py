"""The records `edgefarm run` passes between its stages: RunRequest (the flags) -> RunPlan (plan.py,
pure) -> Execution (execute.py: a DeviceOutcome per device, the farm's record, farm/types.py) ->
RunRecord (finish.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from android_runner.status import DEFAULT_MAX_OUTPUT_TOKENS, DEFAULT_SAMPLE_TIMEOUT_S

from ..datasets.types import Dataset, Sample
from ..devices.base import Device
from ..devices.types import DeviceInfo, Inventory
from ..devices.units import parse_backends
from ..farm.run_json import DatasetStamp, ModelStamp, RunJson, StandIn
from ..farm.types import DeviceOutcome
from ..jobs import JobOptions
from ..models import ModelSummary
from ..redact import redact, redact_tree
from ..runners.base import (
    DEFAULT_COOLDOWN_MAX_S,
    DEFAULT_SETTLE_C,
    DEFAULT_SETTLE_MAX_S,
    DEFAULT_SETTLE_S,
    RunOptions,
)
from .recorded import RecordedRequest, recorded_as

if TYPE_CHECKING:  # named in annotations only
    from ..farm.shard import ShardGroup, ShardPlan
    from ..report.types.run_report import RunReport
    from ..scoring import ScoreFn

DEFAULT_FALLBACK_WAIT_S = 60.0  # how long a lost phone may take to come back before its stand-in runs


@dataclass(frozen=True)
class RunRequest(RecordedRequest):
    """`edgefarm run`'s flags, as parsed (for --resume: the recorded ones, cli/resume.py).

    The one list of what a run records and a resume carries: every field whose metadata is
    `recorded_as(...)` (run/recorded.py: its run.json key). `out` and `resume` name where this session
    works, nothing else."""

    device_spec: str = field(default="all", metadata=recorded_as("devices"))
    inventory: Path | None = field(default=None, metadata=recorded_as("inventory"))
    # run.json `model` records it (ModelStamp)
    model: Path | None = field(default=None, metadata=recorded_as("model.path"))
    # run.json `dataset` records it, a token masked
    dataset_spec: str = field(default="", metadata=recorded_as("dataset.path"))
    fmt: str | None = field(default=None, metadata=recorded_as("format"))
    subset: str | None = field(default=None, metadata=recorded_as("subset"))
    limit: int | None = field(default=None, metadata=recorded_as("limit"))
    per_modality: int | None = field(default=None, metadata=recorded_as("per_modality"))
    modalities: tuple[str, ...] = field(default=(), metadata=recorded_as("modality"))
    out: Path = Path("runs")
    resume: Path | None = None
    max_output_tokens: int | None = field(default=None, metadata=recorded_as("max_output_tokens"))
    max_num_tokens: int | None = field(default=None, metadata=recorded_as("max_num_tokens"))
    backend: str | None = field(default=None, metadata=recorded_as("backend"))
    threads: int | None = field(default=None, metadata=recorded_as("threads"))
    sample_timeout_s: float = field(default=DEFAULT_SAMPLE_TIMEOUT_S, metadata=recorded_as("sample_timeout_s"))
    cooldown_c: float | None = field(default=None, metadata=recorded_as("cooldown_c"))
    cooldown_max_s: float = field(default=DEFAULT_COOLDOWN_MAX_S, metadata=recorded_as("cooldown_max_s"))
    # --settle: before the block, wait until the temperatures settle (docs/conditions.md)
    settle: bool = field(default=False, metadata=recorded_as("settle", quiet=True))
    settle_c: float = field(default=DEFAULT_SETTLE_C, metadata=recorded_as("settle_c"))
    settle_s: float = field(default=DEFAULT_SETTLE_S, metadata=recorded_as("settle_s"))
    settle_max_s: float = field(default=DEFAULT_SETTLE_MAX_S, metadata=recorded_as("settle_max_s"))
    judge_url: str | None = field(default=None, metadata=recorded_as("judge_url"))
    judge_model: str | None = field(default=None, metadata=recorded_as("judge_model"))
    fallback_boards: tuple[str, ...] = field(default=(), metadata=recorded_as("fallback", quiet=True))
    fallback_wait_s: float = field(
        default=DEFAULT_FALLBACK_WAIT_S, metadata=recorded_as("fallback_wait_s", quiet=True)
    )
    shard: bool = field(default=False, metadata=recorded_as("shard", quiet=True))
    # --units: identical devices each run every sample; the report compares the units (report/units.py)
    units: bool = field(default=False, metadata=recorded_as("units", quiet=True))
    repeat: int = field(default=1, metadata=recorded_as("repeat", quiet=True))
    warmup: int = field(default=0, metadata=recorded_as("warmup", quiet=True))
    # --sustain: the samples N times back to back, no cooldown (orchestrator/sustain.py)
    sustain: int = field(default=1, metadata=recorded_as("sustain", quiet=True))
    parallel_local: bool = field(default=False, metadata=recorded_as("parallel_local", quiet=True))
    # a Ray cluster's head: the devices of its farm hosts (docs/cluster.md)
    cluster: str | None = field(default=None, metadata=recorded_as("cluster"))
    # --fidelity: each device scores the references too (docs/fidelity.md)
    fidelity: bool = field(default=False, metadata=recorded_as("fidelity", quiet=True))
    # --reference: the device the others' fidelity is measured against
    reference: str | None = field(default=None, metadata=recorded_as("reference"))

    def job_options(self, refused: Mapping[str, str]) -> JobOptions:
        return JobOptions(
            max_output_tokens=self.max_output_tokens or DEFAULT_MAX_OUTPUT_TOKENS,
            override=self.max_output_tokens is not None,
            refused=refused,
            fidelity=bool(self.fidelity),
        )


@dataclass(frozen=True)
class PreviousRun:
    """What --resume needs from the run's run.json (read by rundir.read_run_json, checked there)."""

    run_id: str
    run_dir: Path
    started_at: str
    devices: tuple[str, ...]
    model_sha256: str
    dataset_sha256: str
    sample_ids: tuple[str, ...] | None
    record: RunJson  # the whole run.json

    @classmethod
    def of(cls, run: RunJson, run_dir: Path) -> PreviousRun:
        return cls(
            run_id=run.run_id,
            run_dir=Path(run_dir),
            started_at=run.started_at,
            devices=run.devices,
            model_sha256=run.model.sha256,
            dataset_sha256=run.dataset.sha256,
            sample_ids=run.dataset.sample_ids,
            record=run,
        )


@dataclass(frozen=True)
class HostSharing:
    """Devices that share this host's CPU (several `kind: local` devices), and how they ran."""

    devices: tuple[str, ...]
    mode: str  # "sequential" (one after another, the default) | "parallel" (--parallel-local)

    def to_dict(self) -> dict[str, Any]:
        return {"devices": list(self.devices), "mode": self.mode}


@dataclass(frozen=True)
class RunPlan:
    """Everything a run will do, decided before any device is touched (plan.py)."""

    request: RunRequest
    model: ModelSummary
    dataset: Dataset
    samples: tuple[Sample, ...]
    dataset_sha: str
    refused: Mapping[str, str]  # sample id -> why its prompt is not sent
    inventory: Inventory
    devices: tuple[Device, ...]  # what runs
    unusable: tuple[DeviceInfo, ...]
    notes: tuple[str, ...]
    report_devices: tuple[str, ...]  # run.json `devices`: shard groups, and devices of an earlier session
    base: RunOptions  # the run's options before a device's backend and threads; run_id "" until the folder exists
    options: Mapping[str, RunOptions]  # per device (base with its backend and threads)
    job: JobOptions
    lanes: tuple[tuple[str, ...], ...]  # devices run one after another within a lane, lanes together
    host_sharing: HostSharing | None
    stand_ins: Mapping[str, tuple[str, ...]]  # phone -> boards that stand in for it ("*": any)
    absent: tuple[DeviceInfo, ...]  # named phones not attached, with a stand-in
    score: ScoreFn  # the format's scorer (plan.scorer_for); execute() makes the run's RunScoring of it
    shards: ShardPlan | None = None  # --shard
    units: tuple[ShardGroup, ...] = ()  # --units: the groups of identical devices, each running every sample
    previous: PreviousRun | None = None  # --resume
    cluster: Any = None  # cluster.controller.ClusterFarm with --cluster: its devices run on their farm hosts

    def options_for(self, device: Any, run_id: str) -> RunOptions:
        """A device's options in this run: the plan's for a device it runs, else (a stand-in board) the
        run's with the command line's backend and threads over the board's own, as the plan decides them."""
        backend = next(iter(parse_backends(self.request.backend)), None)  # a matrix run's first backend
        opts = self.options.get(device.name) or self.base.for_device(device, backend, self.request.threads)
        return replace(opts, run_id=run_id)

    def run_json(self, run_id: str, started_at: str, host: Mapping[str, Any]) -> RunJson:
        """run.json at the start of the run (execute.py adds the stand-ins and the cluster's notes,
        finish.py the end and the versions, each as a new record)."""
        plan, model, dataset, request = self, self.model, self.dataset, self.request
        return RunJson(
            run_id=run_id,
            started_at=started_at,
            model=ModelStamp.of(model, model.max_context_tokens),
            dataset=DatasetStamp(
                path=redact(request.dataset_spec),  # a hub URL's token never written
                name=dataset.name,
                format=dataset.format,
                sha256=plan.dataset_sha,
                samples_total=len(dataset.samples),
                samples_run=len(plan.samples),
                sample_ids=tuple(s.id for s in plan.samples),
            ),
            devices=tuple(plan.report_devices),
            flags=redact_tree(request.flags()),  # a --judge URL's password and api_key never written
            host=dict(host),
            unusable=tuple(dataclasses.asdict(u) for u in plan.unusable),
            notes=tuple(plan.notes),
            host_sharing=plan.host_sharing.to_dict() if plan.host_sharing is not None else None,
            shards=plan.shards.record() if plan.shards is not None else None,
            units={g.name: list(g.members) for g in plan.units} if plan.request.units else None,
        )


@dataclass(frozen=True)
class Execution:
    """What the devices did: the run folder, run.json as it stands, each device's outcome."""

    run_id: str
    run_dir: Path
    record: RunJson  # run.json as it stands after the devices (finish.py adds the end)
    outcomes: tuple[DeviceOutcome, ...]
    stood_in: tuple[StandIn, ...]  # the boards that stood in for phones (fallback.py)
    # the devices that ran without trouble, taken before the stand-ins: the report is built from their
    # outcomes (rows, score, device info) as they are; the folders of the others, which a stand-in or
    # a phone's return after a loss may have added to, are read back
    settled: Mapping[str, DeviceOutcome]


@dataclass(frozen=True)
class RunRecord:
    """The finished run: where it is, its reports, and the exit status it earns."""

    run_id: str
    run_dir: Path
    report: RunReport
    paths: Mapping[str, Path]  # format -> file (json, md, html, ...)
    outcomes: Sequence[DeviceOutcome]
    interrupted: bool
    exit_code: int
