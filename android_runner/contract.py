"""The host <-> device contract: one `job.jsonl` line per sample in, one `results.jsonl` line out.

Job bundle (a folder on the device):
  job.jsonl   one JobItem per line
  media/      the sample media; JobItem paths are relative to the bundle folder

results.jsonl: one SampleResult per finished sample, appended and flushed as it goes, so a lost
connection loses at most the sample in flight and a rerun skips ids already present.
Stdlib only: this module is copied to boards next to the runner.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from .status import DEFAULT_MAX_OUTPUT_TOKENS

SCHEMA_VERSION = 1
# Bounds on one results.jsonl line read on the host: a runner's line is far smaller than this.
RESULT_LINE_MAX_BYTES = 16 * 2**20
RESULT_LINE_MAX_DEPTH = 32
# The cap on one answer's UTF-8 bytes, on every runner (android_runner/answer_text.py; the native
# runner's OUTPUT_MAX_BYTES): the rest is dropped and counted in `output_truncated_bytes`.
OUTPUT_MAX_BYTES = 2**20
# --fidelity (docs/fidelity.md): per-token scores and answer token ids kept on one row (the rest is
# counted, not kept), and the longest reference text (characters) a device is asked to score.
FIDELITY_MAX_TOKENS = 256
FIDELITY_TARGET_MAX_CHARS = 4000

# The ids of a sample's extra runs in a job (orchestrator/measure.py makes them): `ID@r2` (--repeat, -r),
# `ID@s2` (--sustain's pass 2), `ID@warmup1`. Part of the contract: a runner orders a bench's items by
# their --sustain pass (android_runner/bench.py bench_order).
REPEAT_MARK = "@r"
SUSTAIN_MARK = "@s"
WARMUP_MARK = "@warmup"


def sustain_pass(item_id: str) -> int | None:
    """The --sustain pass a copy belongs to (`ID@s3` -> 3), None for any other id."""
    head, sep, tail = item_id.rpartition(SUSTAIN_MARK)
    return int(tail) if sep and head and tail.isdigit() else None


# A JSON string (skipped whole) or one bracket; anything else is not matched.
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')


class JsonBoundError(ValueError):
    """JSON text over a size or nesting bound; `kind` is "size" or "depth", `offset` where it tripped."""

    def __init__(self, kind: str, limit: int, offset: int) -> None:
        self.kind, self.limit, self.offset = kind, limit, offset
        what = f"larger than {limit} bytes" if kind == "size" else f"nested deeper than {limit} levels"
        super().__init__(f"JSON {what} (at character {offset})")


def json_depth_over(text: str, max_depth: int) -> int | None:
    """Offset of the first bracket nested deeper than max_depth (outside strings), else None.

    A regex scan, no recursion: `json.loads` recurses once per level and raises RecursionError on
    deep input, so depth is checked before it ever runs.
    """
    if text.count("[") + text.count("{") <= max_depth:
        return None
    depth = 0
    for m in _JSON_TOKEN.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > max_depth:
                return m.start()
        elif c in "]}":
            depth -= 1
    return None


def check_json_bounds(text: str | bytes, max_bytes: int, max_depth: int) -> None:
    """Raise JsonBoundError when JSON text is over max_bytes (UTF-8) or nested deeper than max_depth."""
    if isinstance(text, bytes):
        size = len(text)
    else:  # a str's UTF-8 size is at most 4 bytes a character: encode only when that could matter
        size = len(text) if len(text) * 4 <= max_bytes else len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise JsonBoundError("size", max_bytes, max_bytes)
    at = json_depth_over(text.decode("utf-8", "replace") if isinstance(text, bytes) else text, max_depth)
    if at is not None:
        raise JsonBoundError("depth", max_depth, at)


def loads_bounded(text: str | bytes, max_bytes: int, max_depth: int, **kwargs: Any) -> Any:
    """`json.loads` that first refuses text over max_bytes or nested deeper than max_depth.

    Raises JsonBoundError (a ValueError) for a bound, json.JSONDecodeError for bad JSON.
    """
    check_json_bounds(text, max_bytes, max_depth)
    return json.loads(text, **kwargs)


@dataclass(frozen=True)
class JobPart:
    kind: str  # text | image | audio | video
    text: str = ""
    path: str = ""  # relative to the bundle folder (media only)


@dataclass(frozen=True)
class FidelityAsk:
    """--fidelity for one sample: score `target` teacher-forced after `prefill` (the sample's prompt
    text, android_runner/conversation.py scoring_prefill; none: from the session's start), and tokenize
    the greedy answer. `skip`: why
    the host asks for no score (media, several turns, no reference); the answer is tokenized anyway."""

    target: str = ""
    prefill: tuple[str, ...] = ()
    skip: str = ""


@dataclass(frozen=True)
class JobItem:
    """One sample as the device sees it: no host paths, media as bundle-relative files."""

    id: str
    turns: tuple[tuple[JobPart, ...], ...]
    system: str | None = None
    tools: tuple[Mapping[str, Any], ...] = ()
    constraint: Mapping[str, Any] | None = None  # {"type": "json_schema"|"regex"|..., ...}
    max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS
    sampler: Mapping[str, Any] = field(default_factory=lambda: {"top_k": 1, "seed": 0})
    refused: str = ""  # non-empty: the host refused the sample (why); the runner records it as error
    # `edgefarm bench`: the cell this item measures instead of a conversation (android_runner/bench.py):
    # {"n_prompt", "n_gen", "n_depth", "backend", "threads"}; None for a dataset sample
    bench: Mapping[str, Any] | None = None
    fidelity: FidelityAsk | None = None  # --fidelity: the scoring pass after the answer (None: off)
    # `edgefarm serve`: the messages before the turns (a chat's history as the client sent it), each
    # (role, parts) with role "user" or "assistant": the conversation starts from them (conversation.py)
    history: tuple[tuple[str, tuple[JobPart, ...]], ...] = ()
    # `edgefarm serve`: the client reads the answer as it comes, so the runner sends it piece by piece
    # (PIECE lines, the runtime's streaming call); False: the answer whole, the run's own call
    stream: bool = False

    def to_json(self) -> str:
        """The same text as from `asdict`, without its deep copy of every value (a job of 200 samples is
        written once per device: 7.7 -> 1.8 ms)."""
        d = dict(vars(self))
        d["turns"] = [[vars(p) for p in turn] for turn in self.turns]
        d["history"] = [[role, [vars(p) for p in parts]] for role, parts in self.history]
        if self.fidelity is not None:
            d["fidelity"] = vars(self.fidelity)
        return json.dumps(d, ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, line: str) -> JobItem:
        d = json.loads(line)
        d["turns"] = tuple(tuple(JobPart(**p) for p in turn) for turn in d["turns"])
        d["tools"] = tuple(d.get("tools") or ())
        d["history"] = tuple((str(role), tuple(JobPart(**p) for p in parts)) for role, parts in d.get("history") or ())
        if d.get("fidelity") is not None:
            f = d["fidelity"]
            d["fidelity"] = FidelityAsk(
                str(f.get("target", "")), tuple(f.get("prefill") or ()), str(f.get("skip", ""))
            )
        return cls(**d)


@dataclass(frozen=True)
class TurnFigures:
    """Per-turn runtime figures (the runtime reports prefill/decode per turn)."""

    prefill_tokens: int | None = None
    prefill_tps: float | None = None
    decode_tokens: int | None = None
    decode_tps: float | None = None
    wall_ms: float | None = None


@dataclass(frozen=True)
class FidelityScores:
    """--fidelity on one row (docs/fidelity.md): the reference answer's per-token log-likelihoods,
    teacher-forced after the sample's prompt (the runtime's run_text_scoring), and the greedy answer's
    token ids (the model's tokenizer). Kept: the first FIDELITY_MAX_TOKENS of each; the totals counted.
    A device that could not score says why (`unscored`, `untokenized`): never an empty list as a zero."""

    logp: tuple[float, ...] = ()  # nats, one per token of the reference, as the runtime returned them
    target_tokens: int | None = None  # the reference's tokens (all; logp keeps the first 256)
    # the sum over ALL target_tokens scores, added in order in double precision by the runner (the lm-eval
    # plugin's log-likelihood of a continuation longer than the kept 256)
    logp_sum: float | None = None
    answer_ids: tuple[int, ...] = ()
    answer_tokens: int | None = None  # the answer's tokens (all; answer_ids keeps the first 256)
    score_ms: float | None = None  # the extra time of this pass: tokenizing, session, prefill, scoring
    unscored: str = ""  # why the reference has no scores ("" when it has)
    untokenized: str = ""  # why the answer has no token ids ("" when it has)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FidelityScores:
        d = {k: v for k, v in d.items() if k in _FIDELITY_FIELDS}
        d["logp"] = tuple(float(x) for x in d.get("logp") or ())
        d["logp_sum"] = None if d.get("logp_sum") is None else float(d["logp_sum"])
        d["answer_ids"] = tuple(int(x) for x in d.get("answer_ids") or ())
        return cls(**d)


_FIDELITY_FIELDS = frozenset(f.name for f in fields(FidelityScores))


@dataclass(frozen=True)
class Settle:
    """--settle before a block (docs/conditions.md): the wait until every temperature sensor of the device
    changed less than `limit_c` over the last `window_s`, at most `max_wait_s`. On the block's first row.
    `settled` None: no sensor was readable, nothing was gated (a warning says so)."""

    settled: bool | None
    waited_s: float
    limit_c: float
    window_s: float
    max_wait_s: float
    span_c: float | None = None  # the largest change of one sensor over the last window (None: none measured)
    start_c: Mapping[str, float] = field(default_factory=dict)  # sensor -> its first reading
    end_c: Mapping[str, float] = field(default_factory=dict)  # sensor -> its last reading

    def to_dict(self) -> dict[str, Any]:
        return {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in vars(self).items()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Settle:
        settled = d.get("settled")
        span = d.get("span_c")
        return cls(
            settled=None if settled is None else bool(settled),
            waited_s=float(d.get("waited_s") or 0.0),
            limit_c=float(d.get("limit_c") or 0.0),
            window_s=float(d.get("window_s") or 0.0),
            max_wait_s=float(d.get("max_wait_s") or 0.0),
            span_c=None if span is None else float(span),
            start_c={str(k): float(v) for k, v in (d.get("start_c") or {}).items()},
            end_c={str(k): float(v) for k, v in (d.get("end_c") or {}).items()},
        )


@dataclass(frozen=True)
class SampleResult:
    """One finished sample on one device. Units are in the names; None = not measured."""

    id: str
    status: str  # one of android_runner.status.STATUSES (the one list)
    output: str = ""
    error: str = ""
    exit_code: int | None = None
    signal: int | None = None
    init_ms: float | None = None  # engine load, once per runner process (repeated on each row)
    ttft_ms: float | None = None  # first turn: send -> first token (runtime's own figure)
    prefill_tokens: int | None = None  # summed over turns
    prefill_tps: float | None = None  # last turn's prefill speed
    decode_tokens: int | None = None  # summed over turns
    decode_tps: float | None = None  # last turn's decode speed
    infer_ms: float | None = None  # runtime time for all turns (prefill + decode)
    wall_ms: float | None = None  # whole sample on the device, conversation set-up included
    # Memory, one definition for every runner (docs/run-directory.md, "Figures and their
    # definitions"). All are THIS SAMPLE's, in MB of the runner process, never the whole process
    # life: peak_method says how the per-sample peak was made so.
    peak_rss_mb: float | None = None  # the sample's peak resident memory: max(VmHWM of the sample,
    #   max sampled VmRSS + VmSwap) -- RSS alone misses weights swapped to zram
    peak_hwm_mb: float | None = None  # VmHWM at the end of the sample, the high-water mark having been
    #   reset before it (peak_method "hwm_reset"); None when it could not be reset ("sampled")
    peak_anon_mb: float | None = None  # max sampled RssAnon: anonymous memory (heap, KV cache, activations)
    peak_file_mb: float | None = None  # max sampled RssFile: file-backed pages (the mmapped model weights)
    peak_swap_mb: float | None = None  # max sampled VmSwap
    peak_method: str = ""  # "hwm_reset": VmHWM covers exactly this sample (reset by writing 5 to
    #   /proc/self/clear_refs before it, or a fresh process per sample as with the upstream binary);
    #   "sampled": only the max of VmRSS samples, which can miss a spike shorter than mem_sample_ms
    mem_sample_ms: float | None = None  # interval between memory samples (RssAnon/RssFile/VmSwap/VmRSS)
    turns: tuple[TurnFigures, ...] = ()
    backend: str = ""  # the backend that REALLY ran, from the runtime's own log/API (android_runner/
    #   backend.py); "" when nothing was answered; "cpu" on a fallback row (status error)
    backend_requested: str = ""  # what was asked (--backend / the inventory's backend)
    threads: int | None = None  # CPU threads asked of the runtime (None: the runtime's default)
    threads_ran: int | None = None  # CPU threads the engine really ran with (android_runner/threads.py);
    #   None: not a CPU engine, or a runner that does not say
    threads_from: str = ""  # how threads_ran is known: counted | asked | runtime default (threads.py)
    runner: str = ""  # python | native | upstream: which runner produced the row
    max_output_tokens: int | None = None  # the cap on generated tokens per turn applied to this row
    trace: str = ""  # trace file name in the device folder, if any
    cooldown_s: float | None = None  # waited before the sample for the device to cool (--cooldown-c)
    thermal_before: Mapping[str, Any] | None = None
    thermal_after: Mapping[str, Any] | None = None
    stood_in_for: str = ""  # a stand-in board ran this row for that phone (it was absent or lost)
    ran_on: str = ""  # --shard: the serial of the group member that ran this row (merged rows only)
    # Energy (docs/energy.md): the device's RAW power sums for the sample, and what the host made of
    # them (orchestrator/telemetry/energy.py). None = not measured (no sensor), never 0.
    power: Mapping[str, Any] | None = None
    energy_j: float | None = None  # whole device during the sample, no idle baseline subtracted
    energy_mj_per_token: float | None = None  # energy_j / generated (decode) tokens
    power_source: str = ""  # sysfs:current_now | sysfs:current_avg | hwmon | pmic
    energy_unreliable: str = ""  # why the energy figure cannot be trusted (charging, ...), "" if it can
    sustain_pass: int | None = None  # --sustain: which back-to-back pass (1..N) the row belongs to
    # where TTFT went, ms (orchestrator/telemetry/phases.py): encoder marks where the runtime reports
    # them (upstream binary), text_prefill or prefill (encoders included), after_prefill
    ttft_phases_ms: Mapping[str, float] | None = None
    # The answer as every runner keeps it (android_runner/answer_text.py), and the runtime library check
    invalid_utf8_bytes: int = 0  # bytes of invalid UTF-8 in the model's output, replaced by U+FFFD
    output_truncated_bytes: int = 0  # bytes dropped because the answer exceeded OUTPUT_MAX_BYTES
    runtime_override: str = ""  # non-empty: --allow-runtime let a non-pinned runtime library run (which one)
    # `edgefarm bench`: which engine load of its runner process this row's engine was (1: the first,
    # from a cold start; later ones reload the model for other engine settings); None outside bench
    engine_load: int | None = None
    fidelity: FidelityScores | None = None  # --fidelity only (None: not asked)
    settle: Settle | None = None  # --settle: the gate before the block this row opened (None: not its first row)

    def to_json(self) -> str:
        """The same text as `json.dumps(asdict(self), ...)`, without asdict's deep copy of every value
        (the runner writes one per sample; the fields are JSON values or TurnFigures already)."""
        d = dict(vars(self))
        d["turns"] = [vars(t) for t in self.turns]
        if self.fidelity is not None:
            d["fidelity"] = vars(self.fidelity)
        if self.settle is not None:
            d["settle"] = self.settle.to_dict()
        return json.dumps(d, ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SampleResult:
        d = {k: v for k, v in d.items() if k in _RESULT_FIELDS}  # fields of a newer runner are dropped
        d["turns"] = tuple(TurnFigures(**t) for t in d.get("turns") or ())
        if isinstance(d.get("fidelity"), Mapping):
            d["fidelity"] = FidelityScores.from_dict(d["fidelity"])
        elif "fidelity" in d:
            d["fidelity"] = None
        if "settle" in d:
            d["settle"] = Settle.from_dict(d["settle"]) if isinstance(d["settle"], Mapping) else None
        return cls(**d)

    @classmethod
    def from_json(
        cls, line: str, max_bytes: int = RESULT_LINE_MAX_BYTES, max_depth: int = RESULT_LINE_MAX_DEPTH
    ) -> SampleResult:
        return cls.from_dict(loads_bounded(line, max_bytes, max_depth))


_RESULT_FIELDS = frozenset(f.name for f in fields(SampleResult))


def parse_results(lines: Iterable[str]) -> Iterator[SampleResult]:
    """results.jsonl lines -> results; a torn last line (process killed mid-write) is ignored, and so is
    a line over RESULT_LINE_MAX_BYTES or nested deeper than RESULT_LINE_MAX_DEPTH (never parsed)."""
    for line in lines:
        line = line.strip()
        if not line:
            continue
        try:
            yield SampleResult.from_json(line)
        except (ValueError, TypeError, AttributeError):
            continue


def read_results(path: str) -> Iterator[SampleResult]:
    """Results written so far in a results.jsonl file (none when it does not exist yet)."""
    if not os.path.exists(path):
        return
    with open(path, encoding="utf-8") as f:
        yield from parse_results(f)
