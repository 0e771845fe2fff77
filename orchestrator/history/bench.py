"""A finished `edgefarm bench` -> its record for the results database (pure): the stamp, each device's
runner and runtime identity, and every llama-bench row (bench/rows.py LlamaRow) kept whole.

A bench's configuration is its model (by name), its grid (-p, -n, -d, -r, backends, threads, token
limit, warm-up) and its shape (`bench -p 512 -n 128 -d 0 -r 5`); its rows have no per-sample pairs, so
the history exports them (llama-bench's `sql` / `jsonl`) rather than flagging changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from ..bench.rows import LlamaRow
from ..devices.types import DeviceInfo
from ..farm.run_json import BenchStamp, RunJson
from .entry import as_int, canonical, conditions_json, sha256_text
from .types import DeviceEntry, Identity, RunEntry

if TYPE_CHECKING:
    from ..bench.record import BenchRecord


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def bench_shape(request: Mapping[str, Any]) -> str:
    flags = (("-p", "prompts"), ("-n", "gens"), ("-d", "depths"), ("-r", "repetitions"))
    return "bench " + " ".join(
        f"{flag} {request[key]}" for flag, key in flags if request.get(key) is not None
    )


def bench_entry(run: RunJson, rows: Sequence[LlamaRow], devices: Mapping[str, DeviceInfo],
                folder: str) -> RunEntry:  # fmt: skip
    """`run`: run.json's record (kind bench: its `bench` grid and `outcomes`); `rows`: the llama-bench
    rows; `devices`: device name -> its DeviceInfo (device.json's record). In memory at the end of `edgefarm bench`
    (bench_record_entry), from the folder's files for `history import` (record.py)."""
    grid = run.bench or BenchStamp()
    request = grid.request
    outcomes = run.outcomes or {}
    rows = tuple(rows)
    shape = bench_shape(request)
    model_name = PurePath(run.model.path).name
    config = {"model": model_name, "shape": shape, "token_limit": grid.token_limit,
              **{k: request[k] for k in sorted(request)}}  # fmt: skip
    key = sha256_text(canonical(config))[:16]
    entries = []
    for name in run.devices:
        info, outcome = devices.get(name) or DeviceInfo(name=name, kind=""), _mapping(outcomes.get(name))
        ident = Identity.from_stamp(_mapping(outcome.get("runner")))
        ran = sorted({str(r.backend_ran) for r in rows if r.device == name and r.backend_ran})
        entries.append(DeviceEntry(
            device=str(name), kind=info.kind, hardware=info.model or info.cpu, soc=info.soc, backend=",".join(ran),
            runner=ident.runner, runner_sha256=ident.runner_sha256, runtime_version=ident.runtime_version,
            runtime_sha256=ident.runtime_sha256, config=config, config_key=key, error=str(outcome.get("error") or ""),
            figures={}, samples={}, context_tokens=grid.token_limit,
        ))  # fmt: skip
    versions = dict(run.versions)
    return RunEntry(
        run_id=run.run_id, kind="bench", started_at=run.started_at, finished_at=run.finished_at or "", folder=folder,
        host=" ".join(str(x) for x in (run.host.get("hostname"), run.host.get("platform")) if x),
        edgefarm_version=str(versions.get("edgefarm") or ""), edgefarm_git=str(versions.get("edgefarm_git") or ""),
        model_name=model_name, model_sha256=run.model.sha256, dataset_path="", dataset_sha256="",
        slice_sha256="", samples=len(rows), shape=shape, flags=dict(request), versions=versions,
        devices=tuple(entries), model_size_bytes=as_int(run.model.size_bytes), bench_rows=rows,
        conditions=conditions_json(run.conditions),
    )  # fmt: skip


def bench_record_entry(bench: BenchRecord) -> RunEntry:
    """A finished `edgefarm bench` in memory (bench/record.py): no file of its folder read back."""
    devices = {o.name: o.info for o in bench.outcomes if o.info is not None}
    return bench_entry(bench.run, bench.rows, devices, str(Path(bench.run_dir).resolve()))
