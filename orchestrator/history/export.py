"""The history for the tools people already use (pure):

- `edgefarm bench` rows in llama-bench's fields (bench/rows.py LlamaRow), printed by bench's own
  `sql` and `jsonl` printers: what `llama-bench -o sql | sqlite3 db` and scripts reading its jsonl take;
- each device's run as a row of LiteRT-LM's published benchmark table (its README's columns: Model,
  Device, Backend, Prefill (tokens/sec), Decode (tokens/sec), Time-to-first-token (sec), Model size
  (MB), CPU Memory (MB), Context size, Weight Quantization), with the provenance LiteRT-LM's table does
  not carry: the run, the runtime version and sha256, the runner and model sha256.

LiteRT-LM's figures are one benchmark at a fixed shape (1024 tokens prefill, 256 decode); a run's are
medians over its samples (the shape is the row's `shape`). For fixed shapes, export the bench rows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..bench.rows import LlamaRow
from ..catalogue import LITERT_TABLE, outside_names
from ..printers import BENCH_ROWS, printer
from .store import DeviceRun

# LiteRT-LM's table: field -> its column label
LITERT_COLUMNS = (
    ("model", "Model"), ("device", "Device"), ("backend", "Backend"),
    ("prefill_tokens_per_sec", "Prefill (tokens/sec)"), ("decode_tokens_per_sec", "Decode (tokens/sec)"),
    ("time_to_first_token_sec", "Time-to-first-token (sec)"), ("model_size_mb", "Model size (MB)"),
    ("cpu_memory_mb", "CPU Memory (MB)"), ("context_size", "Context size"),
    ("weight_quantization", "Weight Quantization"),
)  # fmt: skip
PROVENANCE = ("hardware", "shape", "run_id", "started_at", "runtime_version", "runtime_sha256", "runner_sha256",
              "model_sha256", "edgefarm_version")  # fmt: skip


def _figures(run: DeviceRun) -> dict[str, float | None]:
    """LiteRT-LM's figure columns of a device's run, from the catalogue's figures (OUTSIDE_NAMES)."""
    out = {}
    for name, o in outside_names(LITERT_TABLE).items():
        f = run.point.figures.get(o.name)
        value = None if f is None or f.value is None else f.value * o.scale
        out[name] = value if value is None or o.digits is None else round(value, o.digits)
    return out


def litert_rows(runs: Sequence[DeviceRun]) -> list[dict[str, Any]]:
    out = []
    for r in runs:
        p = r.point
        out.append({
            "model": p.model_name, "device": r.device, "backend": p.backend.upper(), **_figures(r),
            "model_size_mb": None if p.model_size_bytes is None else round(p.model_size_bytes / 2**20, 1),
            "context_size": p.context_tokens,
            "weight_quantization": p.quantization, "hardware": r.hardware, "shape": r.config.get("shape", ""),
            "run_id": p.run_id, "started_at": p.started_at, "runtime_version": p.runtime_version,
            "runtime_sha256": p.runtime_sha256, "runner_sha256": p.runner_sha256, "model_sha256": p.model_sha256,
            "edgefarm_version": p.edgefarm_version,
        })  # fmt: skip
    return out


def litert_md(rows: Sequence[Mapping[str, Any]]) -> str:
    """LiteRT-LM's README table, with the run and runtime version after its columns."""
    labels = [label for _, label in LITERT_COLUMNS] + ["Runtime", "Run"]
    lines = ["| " + " | ".join(labels) + " |", "| " + " | ".join(":---" for _ in labels) + " |"]
    for r in rows:
        cells = [_cell(r.get(k)) for k, _ in LITERT_COLUMNS] + [
            _cell(r.get("runtime_version")),
            _cell(r.get("run_id")),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _cell(v: Any) -> str:
    return "–" if v in (None, "") else str(v)


def litert_jsonl(rows: Sequence[Mapping[str, Any]]) -> str:
    return "".join(json.dumps(dict(r), ensure_ascii=False) + "\n" for r in rows)


def llama_sql(rows: Sequence[LlamaRow]) -> str:
    """The recorded bench rows (store.read_bench_rows' records), as `edgefarm bench -o sql` prints them."""
    return printer(BENCH_ROWS, "sql").text()(rows)


def llama_jsonl(rows: Sequence[LlamaRow]) -> str:
    return printer(BENCH_ROWS, "jsonl").text()(rows)
