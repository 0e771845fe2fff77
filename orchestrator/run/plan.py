"""Stage 1 of `edgefarm run`: what the run will do, decided from what was read.

`read_inputs` reads the model, devices.yaml, the dataset and the devices that answer (the only
effects before the run starts); `plan` decides everything else from them without touching a file
or a device: the sample slice and the prompts refused, the scorer, each device's options, the
shards, the stand-ins, what a resume continues, and which devices share this host's CPU. A bad
flag fails here, before any run folder exists.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ..cluster.probe import require_head
from ..datasets import load_dataset, require_valid
from ..datasets.types import Dataset
from ..devices.kinds import kind_spec
from ..devices.types import DeviceInfo, Inventory
from ..devices.units import backend_asked, split_unit, units_of
from ..errors import ConfigError, EdgefarmError
from ..farm.fallback import absent_named, stand_in_boards
from ..farm.run_json import RunJson
from ..farm.shard import identical_groups, plan_shards, split_by_build
from ..inventory import Selection, load_inventory, select_usable
from ..models import ModelSummary, inspect_model
from ..runners.base import RunOptions
from ..runners.readiness import refuse_unready, run_need
from ..scoring import SCORERS, ScoreFn  # each scorer imports nltk & co. when it first scores
from ..scoring.judge import JudgeConfig, add_judge_accuracy, endpoint
from .bounds import check_job
from .selection import dataset_fingerprint, refused_samples, select_samples
from .types import HostSharing, PreviousRun, RunPlan, RunRequest

SEQUENTIAL, PARALLEL = "sequential", "parallel"


@dataclass(frozen=True)
class Inputs:
    """What `plan` decides from, as read by `read_inputs`."""

    model: ModelSummary
    inventory: Inventory
    dataset: Dataset
    dataset_sha: str  # over the files of the selected samples (plan checks a resume against it)
    stand_ins: Mapping[str, tuple[str, ...]]  # phone -> boards that stand in for it ("*": any phone)
    selection: Selection  # the devices that answer, as `edgefarm devices` lists them
    absent: tuple[DeviceInfo, ...]  # phones named in --devices that are not attached but have a stand-in
    previous: PreviousRun | None
    cluster: Any = None  # cluster.controller.ClusterFarm with --cluster (it found the devices)
    infos: Mapping[str, DeviceInfo | None] = field(
        default_factory=dict
    )  # --shard, --units: each device's (None: unreadable)


def read_inputs(request: RunRequest, previous: Mapping[str, Any] | None = None) -> Inputs:
    """The model, devices.yaml, the dataset (checked) and the devices; `previous` is the run.json of
    the run --resume continues."""
    inventory = load_inventory(request.inventory)
    cluster = None
    if request.cluster or inventory.cluster:  # the devices of every farm host, run there (docs/cluster.md)
        require_head(request.cluster or inventory.cluster)  # within 10 s, before Ray is imported or asked
        from ..cluster.controller import ClusterFarm  # Ray: imported only with a cluster

        cluster = ClusterFarm(request.cluster or inventory.cluster)
        cluster.begin()  # its farm hosts' agents start while the model and dataset are read
    model = inspect_model(request.model)
    dataset = require_valid(load_dataset(request.dataset_spec, format=request.fmt, subset=request.subset))
    samples = select_samples(dataset, request.modalities, request.limit, request.per_modality)
    scorer_for(
        dataset.format, request.judge_url, request.judge_model
    )  # bad judge flags fail before discovery
    # a device that cannot run (no runner for its ABI, not the pinned runtime...) is refused here,
    # before anything starts; the others go on (runners/readiness.py, as `edgefarm doctor` shows it;
    # with a cluster each farm host checks its own devices)
    need = run_need(model, samples, request.max_num_tokens)
    if cluster is not None:
        listed = cluster.select(request.device_spec)
        table = cluster.stand_in_table(inventory, request.fallback_boards)  # a bad --fallback too
        selection = cluster.refuse_unready(listed, need)
        absent: tuple[DeviceInfo, ...] = ()  # a phone on no farm host now is not known by name
    else:
        table = stand_in_boards(inventory, request.fallback_boards)  # a bad --fallback too
        # named phones a board stands in for
        named, absent = absent_named(inventory, request.device_spec, table)
        selection = refuse_unready(select_usable(inventory, named), need, os.environ)
    return Inputs(
        infos=device_infos(selection) if request.shard or request.units else {},
        model=model,
        inventory=inventory,
        dataset=dataset,
        dataset_sha=dataset_fingerprint(dataset, samples),
        stand_ins=table,
        selection=selection,
        absent=absent,
        previous=PreviousRun.of(RunJson.from_dict(previous), request.resume)
        if previous is not None
        else None,
        cluster=cluster,
    )


def device_infos(selection: Selection) -> dict[str, DeviceInfo | None]:
    """Every selected device's info (--shard groups identical ones): the selection's when it asked
    (`--devices all`, a cluster's listing), else each device is asked, in parallel; None when it
    cannot answer (it then runs alone and its session says why)."""
    if len(selection.infos) == len(selection.devices):
        return {d.name: i for d, i in zip(selection.devices, selection.infos, strict=True)}

    def info_of(d: Any) -> DeviceInfo | None:
        try:
            return d.info()
        except EdgefarmError:
            return None

    with ThreadPoolExecutor(max_workers=max(1, min(16, len(selection.devices)))) as pool:
        return dict(
            zip([d.name for d in selection.devices], pool.map(info_of, selection.devices), strict=True)
        )


def plan(request: RunRequest, inputs: Inputs) -> RunPlan:
    """The run, decided. Pure: reads no file and asks no device."""
    dataset, model, sel = inputs.dataset, inputs.model, inputs.selection
    refuse_on_cluster(request, inputs.cluster)
    samples = tuple(select_samples(dataset, request.modalities, request.limit, request.per_modality))
    check_job(samples, request.repeat, request.warmup, request.sustain)  # before anything is staged
    refused = refused_samples(samples, model.max_context_tokens)  # too big to send: error rows
    score = scorer_for(dataset.format, request.judge_url, request.judge_model)
    base = RunOptions(run_id="", sample_timeout_s=request.sample_timeout_s, cooldown_c=request.cooldown_c,
                      cooldown_max_s=request.cooldown_max_s, max_num_tokens=request.max_num_tokens,
                      repeat=request.repeat, warmup=request.warmup, sustain=request.sustain,
                      settle_c=request.settle_c if request.settle else None, settle_s=request.settle_s,
                      settle_max_s=request.settle_max_s)  # fmt: skip
    devices = backend_units(sel.devices, request, inputs.inventory.entries, inputs.cluster)
    options = {
        d.name: base.for_device(d, backend_asked(d, request.backend), request.threads) for d in devices
    }
    names = [d.name for d in devices]
    shards, units = None, ()
    if request.shard and request.units:
        raise ConfigError("--shard splits the samples between identical devices, --units runs them all on each",
                          where="--shard --units", fix="pass one of them")  # fmt: skip
    if request.shard:  # identical devices share the samples; the report gets one row per group
        shards = plan_shards(devices, options, samples, inputs.infos)
        names = shards.report_devices(names)
    if request.units:  # identical devices each run every sample, compared unit against unit
        units = tuple(identical_groups(devices, options, inputs.infos))
        if not units:
            raise ConfigError("--units found no two identical devices (same phone model, SoC, ABI, OS build, runner, "
                              "backend and threads)" + "".join(f"; {n}" for n in split_by_build(devices, options, inputs.infos)),
                              where="--units",
                              fix="select two or more identical devices (`edgefarm devices` lists them), or drop --units")  # fmt: skip
    # a model on several OS builds is not one model's units or shards: said before the run
    build_notes = tuple(split_by_build(devices, options, inputs.infos)) if request.shard or request.units else ()
    previous = inputs.previous
    if previous is not None:
        check_resumable(previous, model.sha256, inputs.dataset_sha, [s.id for s in samples])
        names += [d for d in previous.devices if d not in names]  # a device not here now keeps its row
    if request.reference and request.reference not in names:
        raise ConfigError(f"--reference {request.reference!r} is not one of the run's devices",
                          where="--reference", fix=f"name one of: {', '.join(names)}")  # fmt: skip
    lanes, sharing = host_lanes(devices, request.parallel_local)
    return RunPlan(
        request=request,
        model=model,
        dataset=dataset,
        samples=samples,
        dataset_sha=inputs.dataset_sha,
        refused=refused,
        inventory=inputs.inventory,
        devices=devices,
        unusable=sel.unusable + inputs.absent,
        notes=sel.notes + build_notes,
        report_devices=tuple(names),
        base=base,
        options=options,
        job=request.job_options(refused),
        lanes=lanes,
        host_sharing=sharing,
        stand_ins=inputs.stand_ins,
        absent=inputs.absent,
        score=score,
        shards=shards,
        units=units,
        previous=previous,
        cluster=inputs.cluster,
    )


def refuse_on_cluster(request: RunRequest, cluster: Any) -> None:
    """Every option reaches a farm host's device through its `DeviceJob` as it reaches one of this
    controller's; an option that means nothing on a cluster is refused by name, never ignored."""
    if cluster is not None and request.parallel_local:
        raise ConfigError(
            "--parallel-local is about devices sharing this host's CPU; a cluster runs no device of "
            "this host (each farm host runs its own phones, all at once)",
            where="--parallel-local --cluster",
            fix="drop --parallel-local, or run this host's devices without --cluster",
        )


def backend_units(devices: Sequence[Any], request: RunRequest, entries: Sequence[Mapping[str, Any]],
                  cluster: Any) -> tuple[Any, ...]:  # fmt: skip
    """The run's devices, or their device x backend units (devices/units.py units_of: the report's matrix,
    docs/matrix.md); a matrix does not take --shard or --cluster yet."""
    units = units_of(devices, request.backend, entries)
    if not any(split_unit(d.name)[1] for d in units):
        return units
    for flag, on in (("--shard", request.shard), ("--cluster", cluster is not None)):
        if on:
            raise ConfigError(f"a backend matrix runs each phone's backends in turn on this controller; {flag} "
                              "does not take it yet", where=f"--backend {request.backend or ''} {flag}".strip(),
                              fix=f"run the matrix without {flag}, or give each device one backend")  # fmt: skip
    return units


def host_lanes(
    devices: Sequence[Any], parallel: bool
) -> tuple[tuple[tuple[str, ...], ...], HostSharing | None]:
    """The farm's lanes (devices one after another within a lane, lanes at the same time) and what
    run.json says of this host's CPU: several `kind: local` devices share it, so they run one after
    another, each measured alone, unless --parallel-local asks for them together. A device's backend
    units (devices/units.py) are one lane: one phone runs one backend at a time."""
    lanes: dict[str, tuple[str, ...]] = {}
    for d in devices:
        base = split_unit(d.name)[0]
        lanes[base] = (*lanes.get(base, ()), d.name)
    shared = [split_unit(d.name)[0] for d in devices if kind_spec(d.kind).shares_host_cpu]
    local = tuple(d.name for d in devices if kind_spec(d.kind).shares_host_cpu)
    if len(set(shared)) < 2:
        return tuple(lanes.values()), None
    if parallel:
        return tuple(lanes.values()), HostSharing(local, PARALLEL)
    others = tuple(lane for base, lane in lanes.items() if base not in shared)
    return (local, *others), HostSharing(local, SEQUENTIAL)


def check_resumable(previous: PreviousRun, model_sha: str, dataset_sha: str, sample_ids: list[str]) -> None:
    where = str(previous.run_dir / "run.json")
    if previous.model_sha256 != model_sha:
        raise ConfigError(
            "the model file differs from the one this run started with (its sha256 changed)",
            where=where,
            fix="restore that model file, or start a new run without --resume",
        )
    if previous.dataset_sha256 != dataset_sha or list(previous.sample_ids or ()) != sample_ids:
        raise ConfigError(
            "the dataset or the sample selection differs from the one this run started with "
            "(its files changed since)",
            where=where,
            fix="restore the dataset's files, or start a new run without --resume; the selection flags "
            "(--limit, --per-modality, --modality, --subset, --format) are taken from run.json",
        )


def scorer_for(fmt: str, judge_url: str | None, judge_model: str | None) -> ScoreFn:
    """The dataset format's scorer, followed by the LLM judge when one is asked for."""
    base = SCORERS.get(fmt).score
    if not judge_url and not judge_model:
        return base
    if not (judge_url and judge_model):
        raise ConfigError(
            "--judge and --judge-model go together",
            where="--judge",
            fix="pass both the endpoint URL and the judge's model name",
        )
    if fmt != "general_vqa":
        raise ConfigError(
            f"the LLM judge scores General-VQA datasets, not {fmt}",
            where="--judge",
            fix="drop --judge, or use a General-VQA dataset",
        )
    cfg = JudgeConfig(url=judge_url, model=judge_model, api_key=os.environ.get("EDGEFARM_JUDGE_API_KEY"))
    endpoint(cfg)  # a URL with both a password and EDGEFARM_JUDGE_API_KEY fails before any folder exists

    def score(dataset, outputs, answers=None):
        return add_judge_accuracy(base(dataset, outputs, answers), dataset, cfg)

    return score


__all__ = ["Inputs", "plan", "read_inputs", "scorer_for"]
