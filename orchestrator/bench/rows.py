"""llama-bench's rows of a bench (pure): the one record every bench printer, bench.json and the results
database take, and how a cell's figures become its rows.

A cell gives a `pp` row (prefill of n_prompt at depth n_depth) and, when it decodes, a `tg` row.
`LlamaRow` holds llama-bench's fields where the concept is the same (its JSON/CSV/SQL printers), then
edgefarm's, among them the catalogue's tg-row measures (`Measure.bench` ON_TG: `<name>` the mean and
`<name>_sd`); `FIELDS` is their order in every output, `to_dict`/`from_dict` the one codec (bench.json's
`rows`, the results database's `history_bench_rows.fields`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from ..catalogue import LLAMA_BENCH, ON_TG, SPEED, outside_names, with_fields
from ..farm.run_json import ModelStamp
from .results import CellResult, Figure, bench_measures

# a tg-row measure of the catalogue (Measure.bench ON_TG): its mean `<name>` and sd `<name>_sd`
TG_FIELDS = tuple(f for m in bench_measures() if m.bench == ON_TG for f in (m.name, f"{m.name}_sd"))
SAMPLES = ("samples_ns", "samples_ts")  # lists in every output, tuples in the record


@dataclass(frozen=True)
@with_fields(TG_FIELDS)  # the catalogue's tg-row measures: fields after these (their place: FIELDS)
class LlamaRow:
    """One llama-bench row of one cell on one device."""

    # llama-bench's fields (the same concept, its names)
    model_filename: str
    model_size: int | None
    backends: str  # the backend asked
    n_threads: int | None  # the threads the runtime ran with; a runner that does not say: those asked
    n_prompt: int
    n_gen: int
    n_depth: int
    test_time: str
    avg_ns: int | None
    stddev_ns: int | None
    avg_ts: float | None  # the catalogue's speed measure of the row's test (OUTSIDE_NAMES: llama-bench)
    stddev_ts: float | None
    samples_ns: tuple[int, ...]
    samples_ts: tuple[float, ...]
    # edgefarm's
    device: str
    cell: str
    test: str  # pp<n_prompt> | tg<n_gen>
    n_threads_from: str  # counted | asked | runtime default ('' when the runner did not say)
    backend_ran: str
    repetitions: int  # ok repetitions
    errors: int  # failed repetitions
    ci95_lo_ts: float | None
    ci95_hi_ts: float | None
    init_ms: float | None  # the tg-row measures come before this field (FIELDS)
    engine_load: int | None
    peak_rss_mb: float | None
    decode_pct_of_bandwidth_bound: float | None = None  # tg: the mean against decode_bound.py's bound

    def to_dict(self) -> dict[str, Any]:
        """The row in FIELDS order, as bench.json, bench-rows.* and the results database hold it."""
        out = {k: getattr(self, k) for k in FIELDS}
        return {**out, **{k: list(out[k]) for k in SAMPLES}}  # in place: a key keeps its position

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LlamaRow:
        """A row of bench.json or of the results database; a field an older edgefarm did not write is None."""
        values = {k: data.get(k) for k in FIELDS}
        return cls(**{**values, **{k: tuple(values[k] or ()) for k in SAMPLES}})


_OWN = tuple(f.name for f in fields(LlamaRow) if f.name not in TG_FIELDS)
_AT = _OWN.index("init_ms")
FIELDS = (*_OWN[:_AT], *TG_FIELDS, *_OWN[_AT:])  # every output's column order (llama-bench's first)
LLAMA_FIELDS = _OWN[: _OWN.index("device")]  # llama-bench's own


def llama_rows(result: CellResult, model: ModelStamp, test_time: str) -> list[LlamaRow]:
    """llama-bench's rows of one cell: a `pp` row (prefill of n_prompt at depth n_depth) and, when the
    cell decodes, a `tg` row (n_gen decoded after the prompt: at depth n_depth + n_prompt, so its
    n_prompt is 0 and its n_depth that sum, as llama-bench would name it), with its share of the
    device's memory-bandwidth bound when that is known (decode_bound.py)."""
    c, bound_ts = result.cell, result.decode_bound_ts
    base = {
        "model_filename": model.path, "model_size": model.size_bytes,
        "backends": c.backend, "test_time": test_time, "device": result.device,
        # the threads the runtime ran with; a runner that does not say leaves what was asked (None: default)
        "n_threads": result.threads_ran if result.threads_ran is not None else c.threads,
        "n_threads_from": result.threads_from if result.threads_ran is not None else "",
        "cell": c.id, "backend_ran": result.backend, "repetitions": result.repetitions,
        "errors": len(result.errors), "init_ms": result.init_ms, "engine_load": result.engine_load,
        "peak_rss_mb": result.peak_rss_mb,
    }  # fmt: skip
    speed = {m.bench_test: m.name for m in bench_measures() if m.bench == SPEED}  # pp/tg -> its measure
    out = [LlamaRow(**base, test=f"pp{c.n_prompt}", n_prompt=c.n_prompt, n_gen=0, n_depth=c.n_depth,
                    **_speed(result.figure(speed["pp"]), c.n_prompt))]  # fmt: skip
    if c.n_gen:
        decode = result.figure(speed["tg"])
        on_tg = {}
        for m in bench_measures():
            if m.bench == ON_TG:
                on_tg[m.name], on_tg[f"{m.name}_sd"] = result.figure(m.name).mean, result.figure(m.name).sd
        bound = round(100.0 * decode.mean / bound_ts, 2) if bound_ts and decode.mean is not None else None
        out.append(LlamaRow(**base, test=f"tg{c.n_gen}", n_prompt=0, n_gen=c.n_gen,
                            n_depth=c.n_depth + c.n_prompt, **_speed(decode, c.n_gen), **on_tg,
                            decode_pct_of_bandwidth_bound=bound))  # fmt: skip
    return out


def _speed(fig: Figure, tokens: int) -> dict[str, Any]:
    """llama-bench's speed fields: tokens/s per repetition and the time per repetition in ns."""
    ns = tuple(round(tokens / t * 1e9) for t in fig.samples if t > 0)
    ci = fig.interval
    mean_ns = sum(ns) / len(ns) if ns else None
    sd_ns = Figure(tuple(float(x) for x in ns)).sd
    ours = {"mean": fig.mean, "sd": fig.sd if fig.sd is not None else (0.0 if fig.samples else None),
            "samples": tuple(fig.samples)}  # fmt: skip
    return {
        **{o.outside: ours[o.name] for o in outside_names(LLAMA_BENCH).values()},  # avg_ts, stddev_ts, ...
        "avg_ns": round(mean_ns) if mean_ns is not None else None,
        "stddev_ns": round(sd_ns) if sd_ns is not None else (0 if ns else None), "samples_ns": ns,
        "ci95_lo_ts": ci[0] if ci else None, "ci95_hi_ts": ci[1] if ci else None,
    }  # fmt: skip


__all__ = ["FIELDS", "LLAMA_FIELDS", "TG_FIELDS", "LlamaRow", "llama_rows"]
