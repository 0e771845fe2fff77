"""A finished `edgefarm bench` -> its record for the results database (pure): the stamp, each device's
runner and runtime identity, and every llama-bench row of bench.json (bench/results.py) kept whole.

A bench's configuration is its model (by name), its grid (-p, -n, -d, -r, backends, threads, token
limit, warm-up) and its shape (`bench -p 512 -n 128 -d 0 -r 5`); its rows have no per-sample pairs, so
the history exports them (llama-bench's `sql` / `jsonl`) rather than flagging changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from .entry import as_int, canonical, sha256_text
from .types import DeviceEntry, RunEntry


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def bench_shape(request: Mapping[str, Any]) -> str:
    flags = (("-p", "prompts"), ("-n", "gens"), ("-d", "depths"), ("-r", "repetitions"))
    return "bench " + " ".join(
        f"{flag} {request[key]}" for flag, key in flags if request.get(key) is not None
    )


def bench_entry(run: Mapping[str, Any], bench: Mapping[str, Any], folder: str,
                devices: Mapping[str, Mapping[str, Any]]) -> RunEntry:  # fmt: skip
    """`run`: run.json; `bench`: bench.json; `devices`: device name -> its device.json."""
    model, grid = _mapping(run.get("model")), _mapping(run.get("bench"))
    request = _mapping(grid.get("request"))
    outcomes = _mapping(run.get("outcomes"))
    rows = tuple(r for r in bench.get("rows") or () if isinstance(r, Mapping))
    shape = bench_shape(request)
    model_name = PurePath(str(model.get("path", ""))).name
    config = {"model": model_name, "shape": shape, "token_limit": grid.get("token_limit"),
              **{k: request[k] for k in sorted(request)}}  # fmt: skip
    key = sha256_text(canonical(config))[:16]
    entries = []
    for name in run.get("devices") or ():
        info, outcome = _mapping(devices.get(name)), _mapping(outcomes.get(name))
        ident = _mapping(outcome.get("runner"))
        ran = sorted(
            {str(r.get("backend_ran")) for r in rows if r.get("device") == name and r.get("backend_ran")}
        )
        entries.append(DeviceEntry(
            device=str(name), kind=str(info.get("kind") or ""), hardware=str(info.get("model") or info.get("cpu") or ""),
            soc=str(info.get("soc") or ""), backend=",".join(ran), runner=str(ident.get("runner") or ""),
            runner_sha256=str(ident.get("runner_sha256") or ""), runtime_version=str(ident.get("runtime_version") or ""),
            runtime_sha256=str(ident.get("runtime_sha256") or ""), config=config, config_key=key,
            error=str(outcome.get("error") or ""), figures={}, samples={}, context_tokens=as_int(grid.get("token_limit")),
        ))  # fmt: skip
    versions = dict(_mapping(run.get("versions")))
    host = _mapping(run.get("host"))
    return RunEntry(
        run_id=str(run.get("run_id") or ""), kind="bench", started_at=str(run.get("started_at") or ""),
        finished_at=str(run.get("finished_at") or ""), folder=folder,
        host=" ".join(str(x) for x in (host.get("hostname"), host.get("platform")) if x),
        edgefarm_version=str(versions.get("edgefarm") or ""), edgefarm_git=str(versions.get("edgefarm_git") or ""),
        model_name=model_name, model_sha256=str(model.get("sha256") or ""), dataset_path="", dataset_sha256="",
        slice_sha256="", samples=len(rows), shape=shape, flags=dict(request), versions=versions,
        devices=tuple(entries), model_size_bytes=as_int(model.get("size_bytes")), bench_rows=rows,
    )  # fmt: skip
