"""`edgefarm bench` in `edgefarm run`'s three stages: plan (pure) -> execute (the same farm, sessions,
run folder, device locks, progress and Ctrl-C as a run) -> finish (bench.json and the chosen output).

A bench's work unit is a cell (grid.Cell) carried to the runner as a job item's `bench`; `-r`
repetitions are the farm's --repeat copies, `--sustain N` its back-to-back passes (the whole grid N
times; bench/sustained.py) and `--warmup` one uncounted run of each cell first. The farm is run's:
this controller's (farm.LocalFarm) or, with `--cluster`, the Ray cluster's (cluster.controller.
ClusterFarm), the same DeviceJobs either way. No scoring: the rows are the figures.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from android_runner.contract import SampleResult, read_results
from android_runner.status import DEFAULT_SAMPLE_TIMEOUT_S

from ..datasets.types import Dataset
from ..devices.base import Device
from ..devices.types import DeviceInfo
from ..errors import ConfigError
from ..farm import Farm, LocalFarm
from ..fsutil import write_json_atomic, write_text_atomic
from ..inventory import load_inventory, select_usable
from ..jobs import JobOptions
from ..models import ModelSummary, inspect_model
from ..run.bounds import MAX_SUSTAIN_PASSES
from ..run.finish import exit_status  # the run's rule: the same exit codes
from ..run.plan import host_lanes, refuse_on_cluster
from ..run.types import DeviceOutcome, PreviousRun
from ..rundir import device_folder, host_info, new_run_dir, read_outcome, utc_now, versions
from ..runners.base import RunOptions
from ..session import DeviceJob
from .bound import bandwidths, bound_ts
from .grid import MAX_REPETITIONS, Cell, cells, parse_backends, parse_values, refused_shapes
from .html import render as render_html
from .printers import EXTENSIONS, PRINTERS
from .results import CellResult, cell_results, llama_rows
from .sustained import sustained


@dataclass(frozen=True)
class BenchRequest:
    """`edgefarm bench`'s flags as given (the grid as text: run.json keeps it for --resume)."""

    device_spec: str = "all"
    inventory: Path | None = None
    model: Path | None = None
    out: Path = Path("runs")
    prompts: str = "512"
    gens: str = "128"
    depths: str = "0"
    repetitions: int = 5
    backends: str | None = None  # None: each device's own backend
    threads: str | None = None  # None: each device's own threads
    max_num_tokens: int | None = None
    warmup: bool = False
    output: str = "md"
    sample_timeout_s: float = DEFAULT_SAMPLE_TIMEOUT_S
    parallel_local: bool = False
    sustain: int = 1  # --sustain N: the grid N times back to back (each cell once per pass)
    cluster: str | None = None  # --cluster ADDRESS (else the inventory's `cluster:`, if any)

    GRID_KEYS = (
        "prompts",
        "gens",
        "depths",
        "repetitions",
        "backends",
        "threads",
        "max_num_tokens",
        "warmup",
        "sustain",
    )

    def grid_record(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.GRID_KEYS}


@dataclass(frozen=True)
class BenchPlan:
    request: BenchRequest
    model: ModelSummary
    devices: tuple[Device, ...]
    unusable: tuple[DeviceInfo, ...]
    notes: tuple[str, ...]
    grid: Mapping[str, tuple[Cell, ...]]  # device -> its cells
    options: Mapping[str, RunOptions]
    lanes: tuple[tuple[str, ...], ...]
    previous: PreviousRun | None = None
    limit: int | None = None  # the engine's token limit the shapes were checked against
    bandwidth_gbs: Mapping[str, float] = field(default_factory=dict)  # devices.yaml's, by device (bound.py)
    dataset: Dataset = field(default=None)  # type: ignore[assignment]  # the farm's work units, made in plan
    cluster: Any = None  # cluster.controller.ClusterFarm with --cluster (it found the devices)


def plan_bench(
    request: BenchRequest,
    model: ModelSummary,
    selection: Any,
    previous: PreviousRun | None,
    bandwidth_gbs: Mapping[str, float] | None = None,
    cluster: Any = None,
) -> BenchPlan:
    """The bench, decided (pure): each device's cells, refused shapes, options, lanes."""
    if not 1 <= request.repetitions <= MAX_REPETITIONS:
        raise ConfigError(f"-r {request.repetitions} is outside 1..{MAX_REPETITIONS}", where="-r",
                          fix=f"repeat each cell 1 to {MAX_REPETITIONS} times")  # fmt: skip
    if not 1 <= request.sustain <= MAX_SUSTAIN_PASSES:
        raise ConfigError(f"--sustain {request.sustain} is outside 1..{MAX_SUSTAIN_PASSES}", where="--sustain",
                          fix=f"run the grid 1 to {MAX_SUSTAIN_PASSES} times back to back")  # fmt: skip
    if request.sustain > 1 and request.repetitions > 1:
        raise ConfigError(f"--sustain {request.sustain} with -r {request.repetitions}: under --sustain a cell's "
                          "repetitions are its passes", where=f"-r {request.repetitions} --sustain {request.sustain}",
                          fix="drop -r (each pass runs each cell once), or drop --sustain")  # fmt: skip
    refuse_on_cluster(request, cluster)
    prompts, gens, depths = (parse_values(request.prompts, "-p"), parse_values(request.gens, "-n"),
                             parse_values(request.depths, "-d"))  # fmt: skip
    backends = parse_backends(request.backends) if request.backends else None
    threads = parse_values(request.threads, "--threads") if request.threads else None
    limit = request.max_num_tokens or model.max_context_tokens
    grid: dict[str, tuple[Cell, ...]] = {}
    for d in selection.devices:
        grid[d.name] = cells(prompts, gens, depths, backends or (d.backend or "cpu",),
                             threads or (d.threads,))  # fmt: skip
    refused = sorted({why for g in grid.values() for why in refused_shapes(g, limit)})
    if refused:
        raise ConfigError(
            f"{len(refused)} shape(s) do not fit the engine's token limit: " + "; ".join(refused),
            where=f"-p {request.prompts} -n {request.gens} -d {request.depths}",
            fix=f"keep depth + prompt + generated tokens within {limit} (the model's context"
            + (", or --max-num-tokens" if not request.max_num_tokens else "")
            + "), or use a model with a longer context",
        )
    refuse_shapes_sharing_a_dynamic_cache(model, grid, request)
    base = RunOptions(run_id="", sample_timeout_s=request.sample_timeout_s, max_num_tokens=request.max_num_tokens,
                      repeat=request.repetitions, sustain=request.sustain)  # fmt: skip
    options = {d.name: replace(base.for_device(d, None, None), warmup=len(grid[d.name]) if request.warmup else 0)
               for d in selection.devices}  # fmt: skip
    lanes, _sharing = host_lanes(selection.devices, request.parallel_local)
    units = tuple({c.id: c.sample() for g in grid.values() for c in g}.values())
    dataset = Dataset(name="bench", format="bench", root=Path("."), files=(), samples=units)
    return BenchPlan(request=request, model=model, devices=selection.devices, unusable=selection.unusable,
                     notes=selection.notes, grid=grid, options=options, lanes=lanes, previous=previous,
                     limit=limit, dataset=dataset, bandwidth_gbs=dict(bandwidth_gbs or {}), cluster=cluster)  # fmt: skip


def refuse_shapes_sharing_a_dynamic_cache(
    model: ModelSummary, grid: Mapping[str, Sequence[Cell]], request: BenchRequest
) -> None:
    """A model whose KV cache is dynamic keeps, within one engine, the largest cache any cell filled: a
    grid's cells share an engine (one load per engine setting), so every cell after the deepest would
    be measured at the deepest cell's cost (tiny-text-dynamic: decode ~80 tok/s at depth 64 after 7168,
    8030 on a fresh engine). Refused rather than measured wrong; one bench per shape is a fresh engine."""
    if not (model.facts and model.facts.kv_cache_dynamic):
        return
    shapes = sorted({(c.n_prompt, c.n_depth) for g in grid.values() for c in g})
    if len(shapes) > 1:
        raise ConfigError(
            f"{model.path.name} has a dynamic KV cache, which grows to the largest context a cell fills and "
            f"never shrinks within one engine; this grid's {len(shapes)} prompt/depth shapes would share one",
            where=f"-p {request.prompts} -d {request.depths}",
            fix="run one `edgefarm bench` per shape (one -p and one -d each: a fresh engine), e.g. "
            f"`-p {shapes[0][0]} -d {shapes[0][1]}` then `-p {shapes[-1][0]} -d {shapes[-1][1]}`; "
            "scripts/bench_depth.py does that for a depth sweep",
        )


@dataclass(frozen=True)
class BenchInputs:
    """What plan_bench decides from (read_bench_inputs' reads)."""

    model: ModelSummary
    selection: Any  # inventory.Selection (or the cluster's, of RemoteDevices)
    bandwidth_gbs: Mapping[str, float]  # devices.yaml's memory_bandwidth_gbs, by device
    cluster: Any = None  # cluster.controller.ClusterFarm with --cluster or the inventory's `cluster:`


def read_bench_inputs(request: BenchRequest) -> BenchInputs:
    """The model, the devices that answer and their devices.yaml memory bandwidths (the only reads
    before the bench starts). On a cluster (--cluster, or devices.yaml's `cluster:`) the devices are the
    farm hosts' and their bandwidths their hosts' devices.yaml's, as `edgefarm run --cluster` finds them."""
    inventory = load_inventory(request.inventory)
    address = request.cluster or inventory.cluster
    if address:  # the devices of every farm host, run there (docs/cluster.md)
        from ..cluster.probe import require_head

        require_head(address)  # within 10 s, before Ray is imported or asked
        from ..cluster.controller import ClusterFarm  # Ray: imported only with a cluster

        cluster = ClusterFarm(address)
        cluster.begin()  # its farm hosts' agents start while the model is read
        model = inspect_model(request.model)
        selection = cluster.select(request.device_spec)
        bandwidth = {d.name: d.memory_bandwidth_gbs for d in selection.devices if d.memory_bandwidth_gbs}
        return BenchInputs(model, selection, bandwidth, cluster)
    selection = select_usable(inventory, request.device_spec)
    names = {d.name for d in selection.devices}
    return BenchInputs(inspect_model(request.model), selection, bandwidths(inventory.entries, names))


def run_json(plan: BenchPlan, run_id: str, started_at: str) -> dict[str, Any]:
    m = plan.model
    return {
        "schema_version": 1, "kind": "bench", "run_id": run_id, "started_at": started_at,
        "model": {"path": str(m.path), "sha256": m.sha256, "size_bytes": m.size_bytes,
                  "max_context_tokens": m.max_context_tokens,
                  "facts": m.facts.to_json(plan.limit) if m.facts else None},
        "bench": {"request": plan.request.grid_record(), "token_limit": plan.limit,
                  "cluster": plan.cluster.address if plan.cluster else None,  # --resume benches it again
                  "cells": {name: [c.id for c in g] for name, g in plan.grid.items()}},
        "devices": [d.name for d in plan.devices], "host": host_info(), "versions": {},
        "unusable": [{"name": u.name, "state": u.state, "problem": u.problem} for u in plan.unusable],
        "notes": list(plan.notes),
    }  # fmt: skip


@dataclass(frozen=True)
class BenchExecution:
    run_id: str
    run_dir: Path
    record: dict[str, Any]
    outcomes: tuple[DeviceOutcome, ...]


def execute_bench(plan: BenchPlan, console: Console, stop: threading.Event) -> BenchExecution:
    """The cells on every device through the run's farm (sessions, device locks, progress, Ctrl-C)."""
    for u in plan.unusable:
        console.print(f"[yellow]not used:[/] {u.name} ({u.state}): {u.problem}")
    if plan.previous is not None:
        run_id, run_dir, started = plan.previous.run_id, plan.previous.run_dir, plan.previous.started_at
    else:
        run_id, run_dir, started = new_run_dir(plan.request.out)
    record = run_json(plan, run_id, started)
    write_json_atomic(run_dir / "run.json", record)  # a bench's run.json (kind: bench): its own document
    n = sum(len(g) for g in plan.grid.values())
    console.print(
        f"bench {run_id}: {n} cell(s) x {plan.request.repetitions} on {len(plan.devices)} device(s) -> {run_dir}"
    )
    jobs = {}
    for d in plan.devices:  # each device's cells, as a run's DeviceJob (its own share of "samples")
        folder = device_folder(run_dir, d.name)
        jobs[d.name] = DeviceJob(d.name, plan.dataset, tuple(c.sample() for c in plan.grid[d.name]), plan.model,
                                 replace(plan.options[d.name], run_id=run_id), JobOptions(), folder,
                                 earlier=read_outcome(folder))  # fmt: skip
    farm: Farm = plan.cluster or LocalFarm(plan.lanes)  # the cluster's runs each job on its farm host
    outcomes = farm.run(plan.devices, jobs, console, None, stop)  # no scoring: the rows are the figures
    if plan.cluster:  # what crossed the network to each farm host; a head gone during the bench is said
        record["cluster"] = plan.cluster.record()
        for note in plan.cluster.end():
            console.print(f"[yellow]note:[/] {escape(note)}", highlight=False)
            record["notes"] = [*record.get("notes", []), note]
    return BenchExecution(run_id, run_dir, record, tuple(outcomes))


def device_rows(dev_dir: Path) -> list[SampleResult]:
    """A device's counted rows: each cell's first repetition and its repeats (warm-ups left out)."""
    return [*read_results(str(dev_dir / "results.jsonl")), *read_results(str(dev_dir / "repeats.jsonl"))]


def bench_results(plan: BenchPlan, run_dir: Path) -> list[CellResult]:
    out: list[CellResult] = []
    asked = plan.request.repetitions * plan.request.sustain  # one of the two is 1 (plan_bench)
    for d in plan.devices:
        out += cell_results(d.name, plan.grid[d.name], device_rows(device_folder(run_dir, d.name)), asked)
    return out


def cell_bound(plan: BenchPlan, r: CellResult) -> float | None:
    """The device's bandwidth bound on the cell's decode, at the decode's mean context (depth, prompt,
    half the generated tokens); None when the device's bandwidth or the model's facts are unknown."""
    c = r.cell
    return bound_ts(plan.bandwidth_gbs.get(r.device), plan.model.facts, c.n_depth + c.n_prompt + c.n_gen / 2)


def finish_bench(plan: BenchPlan, ex: BenchExecution) -> tuple[list[dict[str, Any]], Path, dict[str, Any]]:
    """bench.json (every cell with every repetition), report.html and bench-rows.<fmt> in the run
    folder, whatever part of the grid ran; the rows, that file, and bench.json's document."""
    results = bench_results(plan, ex.run_dir)
    stamp = ex.record["started_at"]
    model = ex.record["model"]
    bounds = [cell_bound(plan, r) for r in results]
    rows = [row for r, b in zip(results, bounds) for row in llama_rows(r, model, stamp, b)]
    record = ex.record
    record["finished_at"] = utc_now().isoformat(timespec="seconds")
    record["versions"] = versions()
    record["outcomes"] = {o.name: {"error": o.error, "model_loads": o.model_loads, "wall_s": o.wall_s,
                                   "interrupted": o.interrupted, "runner": o.runner} for o in ex.outcomes}  # fmt: skip
    write_json_atomic(ex.run_dir / "run.json", record)
    cells = [{**r.to_json(), "decode_bound_ts": b} for r, b in zip(results, bounds)]
    bench = {"schema_version": 1, "run_id": ex.run_id, "model": model, "cells": cells, "rows": rows}
    if plan.request.sustain > 1:  # per device: each pass's speed as % of the first, heat, first throttle
        bench["sustain"] = {d.name: sustained(plan.grid[d.name], device_rows(device_folder(ex.run_dir, d.name)))
                            for d in plan.devices}  # fmt: skip
    write_json_atomic(ex.run_dir / "bench.json", bench)
    write_text_atomic(ex.run_dir / "report.html", render_html(bench))
    fmt = plan.request.output
    path = ex.run_dir / f"bench-rows.{EXTENSIONS[fmt]}"
    write_text_atomic(path, PRINTERS.get(fmt)(rows))
    return rows, path, bench


__all__ = [
    "BenchInputs",
    "BenchPlan",
    "BenchRequest",
    "execute_bench",
    "exit_status",
    "finish_bench",
    "plan_bench",
    "read_bench_inputs",
]  # fmt: skip
