"""Pure parser of `litert_lm_advanced_main --benchmark --report_peak_memory_footprint` output.
(Over 400 lines: most of it is upstream's patterns, each with its citation.)

Input: the binary's stdout and stderr. Output: the answer text, init phases, TTFT, per-turn
prefill/decode figures, peak memory, what backend really ran, and the runtime's own words when
it failed.

Every pattern below is taken from upstream source, cited as `repo/path:line @ pin`. The pins
(docs/android.md, "Upstream's messages", says why these and not a v0.18.1 tag):
  LM = google-ai-edge/LiteRT-LM @ e533a5ac0da0 (main, 2026-08-08; version.bzl 0.16.0)
  RT = google-ai-edge/LiteRT @ b0f6c12088df (the LITERT_REF that LM's WORKSPACE pins)
  ABSL = abseil/abseil-cpp @ 20260526.0 (the tag that LM's WORKSPACE pins)
Strings that the runtime library prints were also checked byte for byte in the
litert-lm-api 0.18.1 wheel's liblitert-lm.so and, where noted, in real stderr of that runtime on
this host ("seen 0.18.1").

Where upstream prints what (LM runtime/engine/litert_lm_lib.cc, litert_lm_advanced_main.cc):
- the answer goes to stdout (litert_lm_lib.cc PrintMessage); with --multi_turns each turn is
  preceded by the prompt "Please enter the prompt (or press Enter to end): " (no newline,
  litert_lm_lib.cc:259), one more at the end;
- logs go to stderr with absl's prefix `I0000 00:00:<epoch>.<us> <tid> <file>:<line>] ` (ABSL
  absl/log/internal/log_format.cc:103, before absl::InitializeLog, which the binary never calls)
  or LiteRT's `INFO: [<file>:<line>] ` (RT litert/c/internal/litert_logging.cc:76-80 with
  litert_logging.h:125);
- the BenchmarkInfo block goes to stderr line by line WITHOUT a prefix
  (litert_lm_lib.cc:422 `ABSL_LOG(INFO).NoPrefix() << line`), laid out by
  `operator<<(std::ostream&, const BenchmarkInfo&)` (LM runtime/engine/io_types.cc:372-467);
- `--num_iterations=N` repeats conversation + BenchmarkInfo + memory lines N times
  (litert_lm_lib.cc:821-917), each block with its own `BenchmarkInfo:` header;
- a failure ends the run with `Failed to run litert_lm: <absl::Status>` (E level,
  litert_lm_advanced_main.cc:377) and exit code = the status code (:378: 3 INVALID_ARGUMENT,
  5 NOT_FOUND, 13 INTERNAL, ...).

Accepted older variations (listed in shared/notes/litert-lm.md from real captures of older
builds): a glog prefix before `BenchmarkInfo:`, `(Total: 1)` / `(Total 1 turns)`, an
`Init Total` phase or a `Total init time` line, `Executor initialization` style phase names,
`TextToTokenIds Turn N: Processed ...`, `--num_iterations` blocks without a header followed by
an aggregated one, the BenchmarkInfo block on stdout.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from android_runner.backend import (
    FAILURE_KINDS,
    FAILURE_PATTERNS,
    FELL_BACK_TO_CPU,
    SAMPLER_FELL_BACK,
    LogLine,
    classify_backend,
    find_failure,
    log_tail,
    split_line,
)

from .cli_benchmark import parse_cli_benchmark

# The failure kinds and backend evidence live in android_runner/backend.py (one classifier for every
# runner). FAILURE_PATTERNS is re-exported for the tests that check each against upstream's strings.
FATAL_KINDS = (*FAILURE_KINDS, "runtime_error", "backend_fallback")

# Runs that succeed on a different engine than asked: each with a note of what ran.
FALLBACK_PATTERNS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    (
        "gpu_sampler_cpu_fallback",
        SAMPLER_FELL_BACK,
        "main model on GPU; sampling fell back to CPU (GPU sampler library unavailable)",
    ),
    (
        "npu_generic_path",
        dict(FELL_BACK_TO_CPU)["npu_generic_path"],
        "NPU requested but the model has no NPU section (TF_LITE_AUX): generic compiler-plugin path",
    ),
    (
        "npu_no_compiler_plugin",
        dict(FELL_BACK_TO_CPU)["npu_no_compiler_plugin"],
        "no NPU compiler plugin found: the model ran on CPU",
    ),
)
_NOTES = {kind: note for kind, _, note in FALLBACK_PATTERNS}
# absl::Status codes (ABSL absl/status/status.cc StatusCodeToString): what an exit status can be.
_STATUS_CODES = frozenset(
    {
        "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
        "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
        "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
    }
)  # fmt: skip

# The runtime's last word on a failed run: the binary's own (LM litert_lm_advanced_main.cc:377),
# or, in captures of the library through its C API, LM c/engine.cc:777 "Failed to create engine: "
# and LM c/conversation.cc:553 "Failed to send message: " (both seen 0.18.1).
_FINAL_ERROR = re.compile(r"(Failed to run litert_lm: |Failed to create engine: |Failed to send message: )")
# LM runtime/engine/litert_lm_lib.cc:499
_CHOOSE_BACKEND = re.compile(r"Choose backend: (\w+)")
# LM runtime/engine/litert_lm_lib.cc:259 (stdout, before each --multi_turns turn)
MULTI_TURN_PROMPT = "Please enter the prompt (or press Enter to end): "

_GLOG = re.compile(r"^[IWEF](?:\d{4} \d\d:\d\d:\d\d\.\d{6}|0000 00:00:\d+\.\d{6})\s+-?\d+\s+[^\s\]]+:\d+\]")
_NUM = r"(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
# ABSL absl/time/duration.cc:731-765 FormatDuration: "72h3m0.5s", "1.2ms", "11.2us", "0";
# older captures wrote "0.92 s" and "2min".
_DURATION = re.compile(
    r"(?<![\w.])(?P<neg>-)?(?:(?P<h>\d+)h)?(?:(?P<m>\d+)m(?![a-z]))?"
    r"(?:(?P<v>\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s?(?P<u>ns|us|µs|ms|s|min)\b)?"
)
_UNIT_MS = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1000.0, "min": 60000.0}
# LM runtime/engine/litert_lm_lib.cc:468 / :471 `<< peak_mem_mb << "MB."` (float, no space);
# :473 / :475 with --log_sink_file "%.2f MB".
_MEMORY_LINE = re.compile(r"Peak (system ram usage|private footprint):\s*" + _NUM + r"\s*MB", re.IGNORECASE)
# LM runtime/engine/io_types.cc:372-467 (operator<< for BenchmarkInfo): header :375, TTFT :406
_HEADER = "BenchmarkInfo"
_TTFT = "Time to first token"
_SEPARATOR = re.compile(r"^\s*-{10,}\s*$")
_BLOCK_LINE = re.compile(r"^\s*(?:Init Phases|Time to first token|Prefill Turns|Decode Turns|- [^:]+: )")


@dataclass(frozen=True)
class TurnStat:
    turn: int
    tokens: int | None = None
    duration_ms: float | None = None
    tps: float | None = None


@dataclass(frozen=True)
class BenchmarkOutput:
    answer: str = ""
    has_benchmark: bool = False
    init_phases_ms: tuple[tuple[str, float], ...] = ()
    init_total_ms: float | None = None
    ttft_ms: float | None = None
    prefill: tuple[TurnStat, ...] = ()
    decode: tuple[TurnStat, ...] = ()
    peak_ram_mb: float | None = None
    peak_private_mb: float | None = None
    iterations: int = 1
    failure: str = ""  # one of FATAL_KINDS, "no_benchmark", or "" (fine)
    warnings: tuple[str, ...] = ()  # what ran differently than asked, e.g. gpu_sampler_cpu_fallback
    detail: str = ""  # on a failure: the runtime's own last error line(s)
    backend: str = ""  # what really ran (android_runner/backend.py); "" when nothing was answered
    backend_requested: str = ""  # what was asked (--backend, else the binary's `Choose backend:`)
    backend_note: str = ""  # what really ran when it is not simply `backend`
    mark_durations_ms: tuple[tuple[str, float], ...] = ()  # e.g. vision_executor, audio_executor
    exit_status: str = ""  # the absl status code of the final error, e.g. INVALID_ARGUMENT

    @property
    def prefill_tokens(self) -> int | None:
        vals = [t.tokens for t in self.prefill if t.tokens is not None]
        return sum(vals) if vals else None

    @property
    def decode_tokens(self) -> int | None:
        vals = [t.tokens for t in self.decode if t.tokens is not None]
        return sum(vals) if vals else None

    @property
    def infer_ms(self) -> float | None:
        vals = [t.duration_ms for t in self.prefill + self.decode if t.duration_ms is not None]
        return round(sum(vals), 3) if vals else None


def duration_ms(text: str) -> float | None:
    """An absl::Duration as printed (`819.9514ms`, `8.7038005s`, `1m2.5s`, `11.2us`) -> ms."""
    for m in _DURATION.finditer(text):
        if not (m.group("h") or m.group("m") or m.group("v")):
            continue
        total = int(m.group("h") or 0) * 3_600_000.0 + int(m.group("m") or 0) * 60_000.0
        if m.group("v"):
            total += float(m.group("v")) * _UNIT_MS[m.group("u")]
        return -total if m.group("neg") else total
    if re.fullmatch(r"\s*0\s*", text):  # absl prints a zero duration as "0"
        return 0.0
    return None


def _benchmark_blocks(lines: list[str]) -> tuple[list[str], int]:
    """The lines of the block to read and the number of iterations seen.

    Upstream prints one full block (header included) per --num_iterations iteration; the LAST
    one is read. Older builds printed headerless per-iteration blocks and an aggregated block
    with a header: the last header still wins and the headerless blocks count the iterations.
    Without any header, the last TTFT line starts it.
    """
    headers = [i for i, ln in enumerate(lines) if _HEADER in ln]
    ttfts = [i for i, ln in enumerate(lines) if _TTFT in ln]
    if headers:
        start = headers[-1]
        iterations = len(headers) if len(ttfts) <= len(headers) else len(ttfts) - len(headers)
    elif ttfts:
        start = ttfts[-1]
        for j in range(ttfts[-1] - 1, -1, -1):
            if "Init Phases" in lines[j]:
                start = j
                break
            if _TTFT in lines[j] or "Decode Turn" in lines[j]:
                break
        iterations = len(ttfts)
    else:
        return [], 0
    return lines[start:], max(iterations, 1)


def _turns(block: list[str], kind: str) -> tuple[TurnStat, ...]:
    stats: dict[int, dict] = {}
    current = None
    for ln in block:
        # LM runtime/engine/io_types.cc:416 / :430 "    Prefill Turn N: " + :366-368
        # "Processed N tokens in <absl::Duration> duration."
        m = re.search(kind + r" Turn (\d+):(.*)", ln)
        if m:
            current = int(m.group(1))
            rest = m.group(2)
            tok = re.search(r"Processed\s+(\d+)\s+tokens", rest)
            dur = re.search(r" in (.+?)(?: duration\.?)?\s*$", rest)
            stats[current] = {
                "tokens": int(tok.group(1)) if tok else None,
                "duration_ms": duration_ms(dur.group(1)) if dur else None,
                "tps": None,
            }
            continue
        # LM runtime/engine/io_types.cc:417-418 / :431-432 "      Prefill Speed: %.2f tokens/sec."
        m = re.search(kind + r" Speed:\s*" + _NUM, ln)
        if m and current is not None and current in stats:
            stats[current]["tps"] = float(m.group(1))
            current = None
    return tuple(TurnStat(turn=n, **v) for n, v in sorted(stats.items()))


def _section(block: list[str], title: str, stop: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    inside = False
    for ln in block:
        if title in ln:
            inside = True
            continue
        if inside and (any(s in ln for s in stop) or _SEPARATOR.match(ln)):
            break
        if inside:
            out.append(ln)
    return out


def _named_durations(lines: list[str]) -> list[tuple[str, float]]:
    out = []
    for ln in lines:
        m = re.match(r"^\s*-?\s*([^:]+):\s*(.+)$", ln)
        if m and (ms := duration_ms(m.group(2))) is not None:
            out.append((m.group(1).strip(), ms))
    return out


def _answer(out_lines: list[str], iterations: int) -> str:
    """stdout without benchmark/memory lines and without the --multi_turns prompts."""
    lines: list[str] = []
    for i, ln in enumerate(out_lines):
        if _HEADER in ln or re.match(r"^\s*(Init Phases|Time to first token|Prefill Turns|Decode Turns)", ln):
            break  # an older build's block on stdout: the answer came before it
        if _SEPARATOR.match(ln) and any(_BLOCK_LINE.match(x) for x in out_lines[i + 1 : i + 3]):
            break  # a headerless --num_iterations block starts with its separator
        if _MEMORY_LINE.search(ln) or _GLOG.match(ln):
            continue
        while ln.startswith(MULTI_TURN_PROMPT):
            ln = ln[len(MULTI_TURN_PROMPT) :]
        lines.append(ln)
    while lines and not lines[-1].strip():
        lines.pop()
    if iterations > 1 and lines and len(lines) % iterations == 0:  # the same answer N times
        size = len(lines) // iterations
        chunks = [lines[i : i + size] for i in range(0, len(lines), size)]
        if all(c == chunks[0] for c in chunks):
            lines = chunks[-1]
    return "\n".join(lines).strip("\n")


def _final_error(lines: list[LogLine]) -> tuple[str, str, bool]:
    """The runtime's own last error (with its `└ ` continuation lines), its absl status code, and
    whether it is a verdict (the binary's final line or a FATAL), not just the last ERROR line."""
    idx = None
    for i, ln in enumerate(lines):
        if _FINAL_ERROR.search(ln.text):
            idx = i
    verdict = idx is not None
    if idx is None:  # no verdict line: the last FATAL, then ERROR, line (linker errors included)
        for level in ("F", "E"):
            found = [i for i, ln in enumerate(lines) if ln.severity == level]
            if found:
                idx = found[-1]
                verdict = level == "F"
                break
        if idx is None:
            found = [i for i, ln in enumerate(lines) if FAILURE_PATTERNS[0][1].search(ln.text)]
            idx = found[-1] if found else None
    if idx is None:
        return "", "", False
    text = lines[idx].text.strip()
    m = _FINAL_ERROR.search(text)
    if m:
        text = text[m.start() :]
    parts = [text]
    for ln in lines[idx + 1 :]:
        if ln.severity or not ln.text.lstrip().startswith("\u2514"):
            break
        parts.append(ln.text.strip())
    # absl::Status::ToString: "<CODE>: <message>" (ABSL absl/status/internal/status_internal.cc:147);
    # only a real status code counts: a log's "ERROR: " severity is not one.
    codes = [c for c in re.findall(r"(?:^|: )([A-Z][A-Z_]{3,}): ", text) if c in _STATUS_CODES]
    return "\n".join(parts), (codes[0] if codes and verdict else ""), verdict


def parse_benchmark_output(stdout: str, stderr: str = "", requested: str = "") -> BenchmarkOutput:
    """Read the upstream binary's output (or `litert-lm benchmark`'s); the block may be on either stream.

    `requested`: the backend the run asked for (`--backend`); without it, the binary's own
    `Choose backend:` line. `backend` on the result is what RAN (android_runner/backend.py).
    """
    raw_out = stdout.splitlines()
    out_split = [split_line(ln) for ln in raw_out]
    err_split = [split_line(ln) for ln in stderr.splitlines()]
    out_lines = [ln.text for ln in out_split]
    err_lines = [ln.text for ln in err_split]

    cli = parse_cli_benchmark("\n".join(out_lines + err_lines))
    in_stdout = any(_HEADER in ln or _TTFT in ln for ln in out_lines)
    block, iterations = _benchmark_blocks(out_lines if in_stdout else err_lines)
    if cli is not None and cli.has_results:  # `litert-lm benchmark`: its own layout, read below
        block, iterations = [], 1
    answer = "" if cli is not None else _answer(raw_out, iterations)

    phases: list[tuple[str, float]] = []
    marks: list[tuple[str, float]] = []
    init_total = None
    ttft = None
    if block:
        turn_titles = ("Time to first token", "Prefill Turns", "Decode Turns", "Prefill Turn", "Decode Turn")
        for name, ms in _named_durations(_section(block, "Init Phases", turn_titles)):
            if name.lower() in ("init total", "total", "total init time"):
                init_total = ms  # LM io_types.h:228 "Init Total" (InitPhase::kTotal)
            else:
                phases.append((name, ms))
        marks = _named_durations(_section(block, "Mark Durations", ("Profile Summary",)))
        for ln in block:
            m = re.search(r"Total init time:\s*(.+)$", ln)
            if m and duration_ms(m.group(1)) is not None:
                init_total = duration_ms(m.group(1))
            # LM runtime/engine/io_types.cc:406 "  Time to first token: %.2f s"
            m = re.search(_TTFT + r":\s*(.+)$", ln)
            if m and ttft is None:
                ttft = duration_ms(m.group(1))
        if init_total is None and phases:
            init_total = round(sum(ms for _, ms in phases), 4)
    prefill = _turns(block, "Prefill") if block else ()
    decode = _turns(block, "Decode") if block else ()
    # LM runtime/engine/io_types.cc:413 "    No prefill turns recorded."; :347-357 TTFT is 0.0
    # when there is no valid turn.
    no_prefill = any("No prefill turns recorded" in ln for ln in block)
    if no_prefill or (ttft == 0.0 and not prefill):
        ttft = None
    elif prefill and decode:
        # The printed TTFT has 10 ms resolution ("%.2f s"); recompute it the way upstream does
        # (LM runtime/engine/io_types.cc:347-357: first decode token + first prefill turn) when
        # the printed value is that figure rounded (older builds measured it otherwise: kept).
        p0, d0 = prefill[0], decode[0]
        if p0.duration_ms is not None and d0.duration_ms is not None and p0.tokens and d0.tokens:
            exact = round(d0.duration_ms / d0.tokens + p0.duration_ms, 4)
            if ttft is None or abs(ttft - exact) <= 5.0 + 1e-6:
                ttft = exact

    peak_ram = peak_private = None
    for ln in out_lines + err_lines:
        m = _MEMORY_LINE.search(ln)
        if m:
            if "system" in m.group(1).lower():
                peak_ram = float(m.group(2))
            else:
                peak_private = float(m.group(2))

    all_lines = out_split + err_split
    texts = [ln.text for ln in all_lines]
    chosen = ""
    for t in texts:
        m = _CHOOSE_BACKEND.search(t)
        if m:
            chosen = m.group(1).lower()
    if cli is not None and cli.has_results:  # `litert-lm benchmark`: one turn each way
        prefill = (TurnStat(1, cli.prefill_tokens, None, cli.prefill_tps),)
        decode = (TurnStat(1, cli.decode_tokens, None, cli.decode_tps),)
        ttft, init_total = cli.ttft_ms, cli.init_ms
    requested = (requested or chosen or (cli.backend if cli else "")).lower()
    final, exit_status, has_verdict = _final_error(all_lines)
    has_benchmark = (bool(block) and not no_prefill and bool(prefill or decode)) or bool(
        cli and cli.has_results
    )
    verdict = classify_backend(texts, requested, answered=has_benchmark and not has_verdict)

    failure = detail = ""
    found = (
        find_failure(all_lines, final if has_verdict else "") if (has_verdict or not has_benchmark) else None
    )
    if found is not None:
        failure = found.kind
        detail = final if has_verdict else found.detail
        if has_verdict and found.detail not in final:
            detail = f"{final}\n{found.detail}"
    elif verdict.failure and verdict.failure != "backend_fallback":
        failure, detail = verdict.failure, (final if has_verdict else verdict.evidence)
    elif has_verdict or not has_benchmark:
        failure = "runtime_error" if has_verdict else "no_benchmark"
        # LM io_types.cc:413 "No prefill turns recorded." is the block's own word for "nothing ran"
        empty = [ln.strip() for ln in block if "turns recorded" in ln]
        detail = final if has_verdict else ("\n".join(empty) if empty else log_tail(texts))
    elif verdict.fell_back:
        failure, detail = "backend_fallback", verdict.evidence

    notes = [_NOTES[f] for f in verdict.flags if f in _NOTES]
    if failure == "gpu_unavailable":
        notes.insert(0, "GPU could not be used and the main model does not fall back to CPU")
    elif failure == "npu_dispatch_missing":
        notes.insert(0, "NPU dispatch runtime unusable: nothing ran")
    elif failure == "backend_fallback":
        notes.insert(0, f"{requested.upper()} requested but the model ran on CPU")
    return BenchmarkOutput(
        answer=answer,
        has_benchmark=has_benchmark,
        init_phases_ms=tuple(phases),
        init_total_ms=init_total,
        ttft_ms=ttft,
        prefill=prefill,
        decode=decode,
        peak_ram_mb=peak_ram,
        peak_private_mb=peak_private,
        iterations=max(iterations, 1),
        failure=failure,
        warnings=verdict.flags,
        detail=detail,
        backend=verdict.ran if not failure or failure == "backend_fallback" else "",
        backend_requested=requested,
        backend_note="; ".join(notes),
        mark_durations_ms=tuple(marks),
        exit_status=exit_status if failure else "",
    )
