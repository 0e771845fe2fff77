"""The Python runner's bench mode: fixed shapes (`edgefarm bench`), one job item per cell repetition.

A bench item (JobItem.bench, docs/bench.md) asks for a prompt of exactly `n_prompt` tokens after a
context of exactly `n_depth` tokens, then `n_gen` decoded tokens, on an engine with the item's
backend and threads. Per item, on a FRESH engine (made for this item alone) and its first session:

  1. depth fill: one prefill of `n_depth` tokens (skipped at depth 0), not timed
  2. the timed prefill of `n_prompt` tokens
  3. the timed decode of `n_gen` tokens

Token counts are exact and checked, never assumed: prompts are made with the model's own tokenizer
(detokenized ids whose re-tokenization has exactly the length asked; the runtime tokenizes each
prefill input on its own), the session applies no prompt template, and after each step the runtime's
per-turn BenchmarkInfo count is compared with what was asked: a difference is an `error` row that
names both numbers. Decode runs exactly `n_gen` tokens whatever the model emits because `n_gen` is
the engine's benchmark setting (`num_decode_tokens`, as LiteRT-LM's own `litert_lm.Benchmark`
sets it).

Why a fresh engine per item: a repetition means what one `litert_lm.Benchmark.run()` means, a fresh
engine's first prefill and decode. An engine's later sessions run faster than its first (on the tiny
model 1.1-1.6x: lazy set-up on the first inference), so repetitions on one kept engine read above the
runtime's own benchmark (issue 41; docs/bench.md). The texts are made once per runner (the model's
tokenizer is the same in every engine), so a repetition's engine does nothing before its timed turns
but read its start token and open the session. Each engine's load is in its row (`init_ms`,
`engine_load`), and so is the CPU thread count it ran with (`threads_ran`, android_runner/threads.py).

The figures are the runtime's own (per-turn prefill and decode tokens/s), and nothing of the runner's
runs beside the two timed turns: the memory sampler sleeps through them (MemorySampler.paused; it cost
a 1-thread engine up to 2% of its prefill speed, scripts/bench_vs_litert.py). TTFT is the runtime's
definition (first prefill turn + one decode step) applied to the timed turn, so the depth fill is not
in it; at depth 0 it is the runtime's `time_to_first_token`.

The engine is made through the package's C library binding (`litert_lm._ffi`), as the package's
own Benchmark does: `litert_lm.Engine` has no way to set `num_decode_tokens`.
Stdlib + litert_lm only: copied to boards next to the runner.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from .backend import BackendVerdict, classify_backend, engine_failure, split_lines
from .contract import JobItem, SampleResult, TurnFigures, sustain_pass
from .memory import MemorySampler, sample_peaks_mb
from .status import Status
from .thermal import thermal_snapshot, with_clocks
from .threads import EngineThreads, thread_ids

# A fixed English passage the prompts are cut from (any text works: only its token count matters).
FILLER = (
    "The farm measures each device on the same shapes so that a phone, a board and this host can be "
    "compared with one another and with published figures. A prompt of a known length is read, the "
    "cache holds a known depth of context, and a known number of tokens is generated after it. "
)
ROUND_TRIP_TRIES = 16  # attempts to find a text whose re-tokenization has exactly the length asked


@dataclass(frozen=True)
class BenchCell:
    """One item's shape and engine settings (JobItem.bench)."""

    n_prompt: int
    n_gen: int
    n_depth: int
    backend: str
    threads: int | None

    @classmethod
    def of(cls, spec: Mapping[str, Any]) -> BenchCell:
        threads = spec.get("threads")
        return cls(int(spec["n_prompt"]), int(spec["n_gen"]), int(spec["n_depth"]), str(spec["backend"]),
                   int(threads) if threads else None)  # fmt: skip

    @property
    def engine_key(self) -> tuple[str, int | None, int]:
        return (self.backend, self.threads, self.n_gen)


def exact_text(
    tokenize: Callable[[str], list[int]], detokenize: Callable[[list[int]], str], pool: list[int], count: int
) -> str:
    """A text the tokenizer reads as exactly `count` tokens, cut from `pool` (token ids of FILLER
    repeated). Raises ValueError when none is found (a tokenizer that merges across every cut)."""
    if count == 0:
        return ""
    k = count
    for _ in range(ROUND_TRIP_TRIES):
        if k < 1 or k > len(pool):
            break
        text = detokenize(pool[:k])
        got = len(tokenize(text))
        if got == count:
            return text
        k += count - got
    raise ValueError(f"no text of exactly {count} tokens found in {ROUND_TRIP_TRIES} tries (the tokenizer "
                     "merges tokens across the cut)")  # fmt: skip


class BenchEngine:
    """One engine with its benchmark settings, through the package's C binding."""

    def __init__(self, model: str, cell: BenchCell, cache_dir: str, max_num_tokens: int | None) -> None:
        from litert_lm._ffi import _get_lib  # the package's own binding (its Benchmark uses it too)
        from litert_lm.session import Session

        self.lib, self._session_cls = _get_lib(), Session
        lib = self.lib
        t0 = time.perf_counter()
        settings = lib.litert_lm_engine_settings_create(model, cell.backend, None, None)
        if not settings:
            raise RuntimeError(f"engine settings refused (model {model}, backend {cell.backend})")
        try:
            lib.litert_lm_engine_settings_enable_benchmark(settings)
            lib.litert_lm_engine_settings_set_cache_dir(settings, cache_dir)
            if cell.threads and cell.backend == "cpu":
                lib.litert_lm_engine_settings_set_num_threads(settings, cell.threads)
            if max_num_tokens:
                lib.litert_lm_engine_settings_set_max_num_tokens(settings, max_num_tokens)
            if cell.n_gen:
                lib.litert_lm_engine_settings_set_num_decode_tokens(settings, cell.n_gen)
            if cell.backend == "gpu":  # prefill timing must not include the weights' upload (as Benchmark)
                lib.litert_lm_engine_settings_set_gpu_wait_for_weight_uploads(settings, True)
            before = thread_ids()
            self.ptr = lib.litert_lm_engine_create(settings)
            created = thread_ids()
        finally:
            lib.litert_lm_engine_settings_delete(settings)
        if not self.ptr:
            raise RuntimeError(f"Failed to create LiteRT-LM engine for {model}")
        self.init_ms = (time.perf_counter() - t0) * 1000.0
        self.key = cell.engine_key
        # to count the CPU threads it runs with once it has worked (threads.py); other backends have none
        self.threads = EngineThreads(cell.threads, before, created) if cell.backend == "cpu" else None
        self.first_extra = self._first_prefill_extra()

    def tokenize(self, text: str) -> list[int]:
        res = self.lib.litert_lm_engine_tokenize(self.ptr, text)
        if not res:
            raise RuntimeError("tokenization failed")
        try:
            n = self.lib.litert_lm_tokenize_result_get_num_tokens(res)
            ids = self.lib.litert_lm_tokenize_result_get_tokens(res)
            return [ids[i] for i in range(n)]
        finally:
            self.lib.litert_lm_tokenize_result_delete(res)

    def detokenize(self, ids: list[int]) -> str:
        arr = (ctypes.c_int * len(ids))(*ids)
        res = self.lib.litert_lm_engine_detokenize(self.ptr, arr, len(ids))
        if not res:
            raise RuntimeError("detokenization failed")
        try:
            s = self.lib.litert_lm_detokenize_result_get_string(res)
            return s.decode("utf-8") if s else ""
        finally:
            self.lib.litert_lm_detokenize_result_delete(res)

    def session(self) -> Any:
        """A fresh session with no prompt template (the prompt's tokens are exactly the ones sent)."""
        config = self.lib.litert_lm_session_config_create()
        try:
            self.lib.litert_lm_session_config_set_apply_prompt_template(config, False)
            ptr = self.lib.litert_lm_engine_create_session(self.ptr, config)
        finally:
            self.lib.litert_lm_session_config_delete(config)
        if not ptr:
            raise RuntimeError("Failed to create session")
        return self._session_cls(self.lib, ptr)

    def _first_prefill_extra(self) -> int:
        """Tokens the runtime puts before a session's first prefill: the model's start token (BOS),
        where it has one. Read from the engine, not measured by a prefill (that would warm the engine
        before the first timed repetition); the runtime's own count after each step checks it."""
        from litert_lm.utils import _parse_token_union  # the package's reader of a token union

        start = _parse_token_union(self.lib, self.lib.litert_lm_engine_get_start_token(self.ptr))
        if start is None:
            return 0
        return len(start) if isinstance(start, list) else 1

    def close(self) -> None:
        if self.ptr:
            self.lib.litert_lm_engine_delete(self.ptr)
            self.ptr = None


class BenchTexts:
    """The prompt texts of one model, by token count: made with an engine's tokenizer on first use and
    kept for every later engine of the runner (the same model: the same tokenizer)."""

    def __init__(self) -> None:
        self.unit: list[int] = []  # FILLER's token ids
        self.pool: list[int] = []  # FILLER's, repeated as far as the longest text needs
        self._texts: dict[int, str] = {}

    def text(self, engine: BenchEngine, count: int) -> str:
        """A text of exactly `count` tokens (made once per count, with `engine`'s tokenizer)."""
        if count not in self._texts:
            if not self.unit:
                self.unit = engine.tokenize(FILLER)
                if not self.unit:
                    raise RuntimeError("the model's tokenizer gives no tokens for English text")
            while len(self.pool) < count + 64:
                self.pool += self.unit
            self._texts[count] = exact_text(engine.tokenize, engine.detokenize, self.pool, count)
        return self._texts[count]


def _check(step: str, asked: int, got: int) -> str:
    return "" if asked == got else f"{step}: the runtime processed {got} tokens, {asked} were asked"


def run_cell(
    engine: BenchEngine,
    texts: BenchTexts,
    cell: BenchCell,
    memory: MemorySampler,
    power: Any,
    base_row: Mapping[str, Any],
) -> SampleResult:
    """One repetition of a cell on the engine's first session: depth fill, timed prefill, timed decode.
    `power`: the board's PowerSampler or None; its reading covers the whole item (depth fill included)."""
    row: dict[str, Any] = dict(base_row)
    turns: list[TurnFigures] = []
    problems: list[str] = []
    memory.reset()
    if power is not None:
        power.reset()
    t_start = time.perf_counter()
    prefill_tps = decode_tps = ttft_ms = None
    prefill_n = decode_n = None
    try:
        depth_text = texts.text(engine, cell.n_depth - engine.first_extra) if cell.n_depth else ""
        prompt_text = texts.text(engine, cell.n_prompt - (0 if cell.n_depth else engine.first_extra))
        s = engine.session()
        try:
            if cell.n_depth:
                t0 = time.perf_counter()
                s.run_prefill([depth_text])
                info = s.get_benchmark_info()
                turns.append(TurnFigures(prefill_tokens=info.last_prefill_token_count,
                                         prefill_tps=round(info.last_prefill_tokens_per_second, 2),
                                         wall_ms=round((time.perf_counter() - t0) * 1000.0, 3)))  # fmt: skip
                problems.append(_check("depth fill", cell.n_depth, info.last_prefill_token_count))
            t0 = time.perf_counter()
            with memory.paused():  # the timed turns run with no sampler thread beside them
                s.run_prefill([prompt_text])
            info = s.get_benchmark_info()
            prefill_n, prefill_tps = info.last_prefill_token_count, info.last_prefill_tokens_per_second
            problems.append(_check("prefill", cell.n_prompt, prefill_n))
            if cell.n_gen:
                with memory.paused():
                    s.run_decode()
                info = s.get_benchmark_info()
                decode_n, decode_tps = info.last_decode_token_count, info.last_decode_tokens_per_second
                problems.append(_check("decode", cell.n_gen, decode_n))
            turns.append(TurnFigures(prefill_tokens=prefill_n, prefill_tps=round(prefill_tps, 2),
                                     decode_tokens=decode_n,
                                     decode_tps=round(decode_tps, 2) if decode_tps is not None else None,
                                     wall_ms=round((time.perf_counter() - t0) * 1000.0, 3)))  # fmt: skip
            if prefill_tps and decode_tps:  # the runtime's TTFT definition, on the timed turn
                ttft_ms = 1000.0 * (prefill_n / prefill_tps + 1.0 / decode_tps)
        finally:
            s.close()
    except Exception as e:  # noqa: BLE001 - the runtime raises generic errors; the row says which
        problems.append(f"{type(e).__name__}: {e}")
    problems = [p for p in problems if p]
    if problems:
        row.update(status=Status.ERROR, error="; ".join(problems))
    return SampleResult(
        ttft_ms=round(ttft_ms, 3) if ttft_ms is not None else None,
        prefill_tokens=prefill_n,
        prefill_tps=round(prefill_tps, 2) if prefill_tps is not None else None,
        decode_tokens=decode_n,
        decode_tps=round(decode_tps, 2) if decode_tps is not None else None,
        infer_ms=sum(t.wall_ms or 0.0 for t in turns[-1:]) or None,
        wall_ms=round((time.perf_counter() - t_start) * 1000.0, 3),
        **sample_peaks_mb(memory.peaks(), memory.peak_method),
        peak_method=memory.peak_method,
        mem_sample_ms=memory.interval_ms,
        turns=tuple(turns),
        power=power.reading() if power is not None else None,
        thermal_after=with_clocks(thermal_snapshot()),
        **row,
    )


class BenchRunner:
    """The bench items of one runner process: a fresh engine for each item (module docstring)."""

    def __init__(self, model: str, cache_dir: str, max_num_tokens: int | None, runner_kind: str) -> None:
        self.model, self.cache_dir, self.max_num_tokens = model, cache_dir, max_num_tokens
        self.runner_kind = runner_kind
        self.engine: BenchEngine | None = None  # the item's engine while it runs
        self.texts = BenchTexts()
        self.loads = 0  # engines made by this process: the first is the cold load
        self.failed: dict[tuple, str] = {}  # engine key -> why it could not be made (not tried again)
        self.power: Any = None  # the board's PowerSampler, set by the runner's main when there is one
        self.on_load: Callable[[BenchEngine], None] = lambda engine: None  # the runner's READY line

    def load(
        self, cell: BenchCell, log_since: Callable[[], str]
    ) -> tuple[BenchEngine, BackendVerdict] | None:
        """A fresh engine for this cell and the backend the runtime's log says it runs on; None when it
        cannot be made (its reason in `failed`, and no later item of its settings tries again)."""
        self.close()
        if cell.engine_key in self.failed:
            return None
        try:
            self.engine = BenchEngine(self.model, cell, self.cache_dir, self.max_num_tokens)
        except Exception as e:  # noqa: BLE001 - the runtime's reason is in its log
            kind, detail = engine_failure(log_since(), cell.backend, str(e))
            self.failed[cell.engine_key] = f"{kind or 'engine'}: {type(e).__name__}: {e}" + (
                f"\n{detail}" if detail else ""
            )
            return None
        self.loads += 1
        lines = [ln.text for ln in split_lines(log_since())]
        verdict = classify_backend(lines, cell.backend, answered=True)
        self.on_load(self.engine)
        return self.engine, verdict

    def run(self, item: JobItem, memory: MemorySampler, log: Any) -> SampleResult:
        """One item; `log` is the runner's StderrLog (the runtime's words since the item began)."""
        cell = BenchCell.of(item.bench or {})
        at = log.offset()

        def log_since() -> str:
            return log.since(at, 1 << 16)

        row: dict[str, Any] = {
            "id": item.id,
            "status": Status.OK,
            "backend_requested": cell.backend,
            "threads": cell.threads,
            "runner": self.runner_kind,
            "max_output_tokens": cell.n_gen,
            "thermal_before": with_clocks(thermal_snapshot()),
        }
        loaded = self.load(cell, log_since)
        if loaded is None:
            return SampleResult(**{**row, "status": Status.ERROR, "error": self.failed[cell.engine_key]})
        engine, v = loaded
        try:
            row["init_ms"] = round(engine.init_ms, 3)
            row["engine_load"] = self.loads
            row["backend"] = v.ran
            result = run_cell(engine, self.texts, cell, memory, self.power, row)
            if engine.threads is not None:  # counted now: a short-lived thread of its creation is gone
                ran = engine.threads.ran()
                result = replace(result, threads_ran=ran.count, threads_from=ran.source)
        finally:
            self.close()
        if result.status == Status.OK and v.fell_back:
            return SampleResult(**{**_fields(result), "status": Status.ERROR,
                                   "error": f"backend_fallback: {v.evidence}"})  # fmt: skip
        return result

    def close(self) -> None:
        if self.engine is not None:
            self.engine.close()
            self.engine = None


def _fields(r: SampleResult) -> dict[str, Any]:
    return dict(vars(r))


def bench_order(items: list[JobItem]) -> list[JobItem]:
    """The items grouped by engine key in order of first appearance (one setting's cells together; each
    item loads its own engine all the same), each group's items in job order: warm-ups, then repetition 1 of every cell, then 2, ... Under --sustain
    the passes come first: pass after pass, each grouped by engine key (pass k runs after pass k-1
    whatever its engine, so the passes follow the device's heating; docs/bench.md)."""
    keys: dict[tuple, list[JobItem]] = {}
    for it in items:
        key = (sustain_pass(it.id) or 1, BenchCell.of(it.bench or {}).engine_key)
        keys.setdefault(key, []).append(it)
    return [it for _, group in sorted(keys.items(), key=lambda kv: kv[0][0]) for it in group]
