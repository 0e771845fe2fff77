"""Stage 1 of `edgefarm bench`, as `edgefarm run`'s plan: the flags as a BenchRequest, the reads it
decides from (read_bench_inputs: the model, the devices, their bandwidths) and the plan, pure: each
device's cells, the refused shapes, per-device options, lanes, and the bench's run.json record.

A bench's work unit is a cell (grid.Cell) carried to the runner as a job item's `bench`; `-r`
repetitions are the farm's --repeat copies, `--sustain N` its back-to-back passes (the whole grid N
times; bench/sustained.py) and `--warmup` one uncounted run of each cell first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from android_runner.status import DEFAULT_SAMPLE_TIMEOUT_S

from ..datasets.types import Dataset
from ..decode_bound import bandwidths
from ..devices.base import Device
from ..devices.types import DeviceInfo
from ..errors import ConfigError
from ..farm.run_json import BenchStamp, ModelStamp, RunJson
from ..inventory import load_inventory, select_usable
from ..models import ModelSummary, inspect_model
from ..run.bounds import MAX_SUSTAIN_PASSES
from ..run.plan import host_lanes, refuse_on_cluster
from ..run.recorded import RecordedRequest, recorded_as
from ..run.types import PreviousRun
from ..runners.base import DEFAULT_SETTLE_C, DEFAULT_SETTLE_MAX_S, DEFAULT_SETTLE_S, RunOptions
from .grid import MAX_REPETITIONS, Cell, cells, parse_backends, parse_values, refused_shapes


def _grid(key: str) -> dict[str, Any]:
    return recorded_as(f"bench.request.{key}")  # run.json `bench.request`: the grid as asked


def _settle(key: str) -> dict[str, Any]:
    return recorded_as(f"bench.settle.{key}")  # run.json `bench.settle`: a condition, not the grid


@dataclass(frozen=True)
class BenchRequest(RecordedRequest):
    """`edgefarm bench`'s flags as given (the grid as text). What run.json records and `bench --resume`
    carries is the fields with a key (run/recorded.py, the run's one list and resume): the grid in
    `bench.request`, --settle's in `bench.settle`, the cluster in `bench.cluster`, the rest in `flags`
    as the run's. `out` and `output` are this session's: where the folder goes, what stdout gets."""

    KIND: ClassVar[str] = "bench"

    device_spec: str = field(default="all", metadata=recorded_as("devices"))
    inventory: Path | None = field(default=None, metadata=recorded_as("inventory"))
    model: Path | None = field(default=None, metadata=recorded_as("model.path"))
    out: Path = Path("runs")
    prompts: str = field(default="512", metadata=_grid("prompts"))
    gens: str = field(default="128", metadata=_grid("gens"))
    depths: str = field(default="0", metadata=_grid("depths"))
    repetitions: int = field(default=5, metadata=_grid("repetitions"))
    backends: str | None = field(default=None, metadata=_grid("backends"))  # None: each device's own backend
    threads: str | None = field(default=None, metadata=_grid("threads"))  # None: each device's own threads
    max_num_tokens: int | None = field(default=None, metadata=_grid("max_num_tokens"))
    warmup: bool = field(default=False, metadata=_grid("warmup"))
    output: str = "md"
    sample_timeout_s: float = field(default=DEFAULT_SAMPLE_TIMEOUT_S, metadata=recorded_as("sample_timeout_s"))
    parallel_local: bool = field(default=False, metadata=recorded_as("parallel_local", quiet=True))
    # --sustain N: the grid N times back to back (each cell once per pass)
    sustain: int = field(default=1, metadata=_grid("sustain"))
    # --cluster ADDRESS (else the inventory's `cluster:`, if any); run.json keeps the address benched
    cluster: str | None = field(default=None, metadata=recorded_as("bench.cluster"))
    # --settle (default): before the grid, the temperatures settle (docs/conditions.md)
    settle: bool = field(default=True, metadata=_settle("settle"))
    settle_c: float = field(default=DEFAULT_SETTLE_C, metadata=_settle("settle_c"))
    settle_s: float = field(default=DEFAULT_SETTLE_S, metadata=_settle("settle_s"))
    settle_max_s: float = field(default=DEFAULT_SETTLE_MAX_S, metadata=_settle("settle_max_s"))

    def grid_record(self) -> dict[str, Any]:
        """run.json `bench.request` (and the results database's comparable configuration)."""
        return self.section("bench.request.")

    def settle_record(self) -> dict[str, Any]:
        """--settle's flags for run.json (beside the grid: a condition of the bench, not part of the
        results database's comparable configuration)."""
        return self.section("bench.settle.")


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
    bandwidth_gbs: Mapping[str, float] = field(default_factory=dict)  # devices.yaml's, by device (decode_bound.py)
    dataset: Dataset = field(default=None)  # type: ignore[assignment]  # the farm's work units, made in plan
    cluster: Any = None  # cluster.controller.ClusterFarm with --cluster (it found the devices)

    def run_json(self, run_id: str, started_at: str, host: Mapping[str, Any]) -> RunJson:
        """run.json at the bench's start, the run's record (kind "bench"; execute.py adds the
        cluster's notes, finish.py the end, each a new record; rundir.write_run_json writes it)."""
        return RunJson(
            run_id=run_id, started_at=started_at, model=ModelStamp.of(self.model, self.limit),
            devices=tuple(d.name for d in self.devices), flags=self.request.flags(), host=dict(host),
            unusable=tuple(dataclasses.asdict(u) for u in self.unusable), notes=tuple(self.notes), kind="bench",
            bench=BenchStamp(request=self.request.grid_record(), settle=self.request.settle_record(), token_limit=self.limit,
                             cluster=self.cluster.address if self.cluster else None,  # --resume benches it again
                             cells={name: tuple(c.id for c in g) for name, g in self.grid.items()}),
        )  # fmt: skip


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
                      repeat=request.repetitions, sustain=request.sustain,
                      settle_c=request.settle_c if request.settle else None, settle_s=request.settle_s,
                      settle_max_s=request.settle_max_s)  # fmt: skip
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


__all__ = ["BenchInputs", "BenchPlan", "BenchRequest", "plan_bench", "read_bench_inputs"]
