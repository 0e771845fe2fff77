"""Pure parser of `litert_lm_advanced_main --benchmark --report_peak_memory_footprint` output.

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

# ------------------------------------------------------------------ failure kinds (decisive)
# Checked in this order over the runtime's final error and then every line: the first kind that
# matches names the failure. Kind names are plain strings (android_runner/status.classify reads
# "oom" and "crash").
FAILURE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # AOSP bionic linker/linker_main.cpp `__linker_cannot_link`:
    #   "CANNOT LINK EXECUTABLE \"%s\": %s\n" (aosp-mirror/platform_bionic @ 01cf2a98), the reason
    #   from linker.cpp: "library \"%s\" not found: needed by main executable"
    ("link_error", re.compile(r'CANNOT LINK EXECUTABLE "')),
    (
        "oom",
        re.compile(
            # libc++ std::bad_alloc::what() == "std::bad_alloc" (in the C++ runtime's terminate text)
            r"std::bad_alloc"
            # RT litert/cc/litert_macros.h:548: kErrorMemoryAllocationFailure -> absl
            #   ResourceExhaustedError, printed by absl::Status as "RESOURCE_EXHAUSTED: ..."
            r"|\bRESOURCE_EXHAUSTED: "
            # RT tflite/delegates/gpu/cl/util.cc:39 / :43 (CLErrorCodeToString)
            r"|Memory object allocation failure|Out of host memory"
        ),
    ),
    (
        "crash",
        # ABSL absl/log/internal/log_format.cc:103/:176: the prefix's first letter is the
        # severity; `F` = ABSL_LOG(FATAL) / CHECK failure, which aborts the process.
        re.compile(r"^F(?:\d{4} \d\d:\d\d:\d\d\.\d{6}|0000 00:00:\d+\.\d{6})\s+-?\d+ [^\s\]]+:\d+\] "),
    ),
    (
        "truncated_model",
        # LM support/util/memory_mapped_file_posix.cc:115-119 / :122-124 (RET_CHECK):
        #   "Length (N) and offset (M) are too large for file size (K)" [" and the file size is
        #   not a multiple of the OS alignment requirement (4096). The file might not have
        #   enough padding."]  (seen 0.18.1 on a truncated .litertlm)
        re.compile(r"Length \(\d+\) and offset \(\d+\) are too large for file size \(\d+\)"),
    ),
    (
        "context_overflow",
        # LM runtime/core/tasks.cc:468-471 (and :751-754 for scoring), INVALID_ARGUMENT:
        #   "Input token ids are too long. Exceeding the maximum number of tokens allowed: N >= M"
        #   (seen 0.18.1)
        re.compile(r"Input token ids are too long\."),
    ),
    (
        "npu_dispatch_missing",
        re.compile(
            # RT litert/runtime/dispatch/dispatch_delegate.cc:129-131
            r"Failed to create a dispatch delegate kernel: No usable Dispatch runtime found"
            # RT litert/runtime/dispatch/dispatch_delegate.cc:115-116
            r"|Failed to initialize Dispatch API: "
            # RT litert/runtime/dispatch/litert_dispatch.cc:119-120
            r"|No dispatch library found in "
        ),
    ),
    (
        "gpu_unavailable",
        re.compile(
            # RT litert/runtime/compiled_model.cc:1053-1058: a GPU-only compilation
            #   (LM runtime/executor/llm_executor_settings_utils.cc:232 sets kGpu alone) with no
            #   GPU delegate applied fails; there is no CPU fallback for the main model.
            r"Some ops are not accelerated\. Add kLiteRtHwAcceleratorCpu"
            # RT litert/runtime/gpu_environment.cc:205-206
            r"|Failed to load OpenCL for LiteRT\."
            # RT tflite/delegates/gpu/cl/opencl_wrapper.cc:170 (and :111 on Windows)
            r"|Can not open OpenCL library on this device"
            # RT ml_drift_delegate/delegate/delegate_opencl.cc:635
            r"|Failed to open OpenCL library: "
            # ml_drift's own loader (not public): the wording is in the 0.18.1 liblitert-lm.so
            r"|Can not find OpenCL library on this device"
            # RT ml_drift_delegate/delegate/delegate_webgpu.cc:285-286 (seen 0.18.1 on this host,
            #   a WebGPU build with no GPU adapter: "... INTERNAL: No adapters found", then the
            #   engine was not created)
            r"|Failed to initialize WebGPU environment: "
        ),
    ),
    (
        "opencl_error",
        # RT tflite/delegates/gpu/cl/util.cc:84 CLErrorCodeToString(CL_INVALID_COMMAND_QUEUE)
        re.compile(r"Invalid command queue"),
    ),
    (
        "model_load",
        re.compile(
            # RT litert/cc/internal/scoped_file_posix.h:41 absl::ErrnoToStatus(errno,
            #   "open() failed: <path>") -> "open() failed: <path>: No such file or directory"
            #   (seen 0.18.1)
            r"open\(\) failed: "
            # LM schema/core/litertlm_read.cc:79 (seen 0.18.1)
            r"|Invalid magic number or failed to read: "
            # LM runtime/components/model_resources_litert_lm.cc:126 / :153 (seen 0.18.1)
            r"| not found in the model\."
            # LM runtime/util/litert_lm_loader.cc:299 (WARNING, then the load fails)
            r"|Failed to map section: "
        ),
    ),
)
FATAL_KINDS = tuple(kind for kind, _ in FAILURE_PATTERNS) + ("runtime_error",)

# Lines that say a backend could not be had, but that every run prints for EVERY accelerator it
# tries (the registry registers NPU, GPU and CPU at each environment creation, whatever the
# backend): they only tell the story when that backend was the one chosen and the run failed.
BACKEND_EVIDENCE: dict[str, re.Pattern[str]] = {
    # RT litert/runtime/accelerators/gpu_registry.cc:130-131
    "gpu": re.compile(r"GPU accelerator could not be loaded and registered\."),
    # RT litert/runtime/accelerators/npu_registry.cc:32-34 (seen 0.18.1 as `npu_registry.cc:34`)
    "npu": re.compile(r"NPU accelerator could not be loaded and registered: "),
}
BACKEND_FAILURE = {"gpu": "gpu_unavailable", "npu": "npu_dispatch_missing"}

# Runs that succeed on a different engine than asked: warnings, with a note of what ran.
FALLBACK_PATTERNS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    (
        "gpu_sampler_cpu_fallback",
        # LM runtime/components/sampler_factory.cc:764-768 ABSL_LOG(WARNING); the 0.18.1 .so
        # continues "To use GPU sampling, please make sure the sampler library matching the
        # inference backend (...) is linked in or available at LD_LIBRARY_PATH on device."
        re.compile(r"GPU sampler unavailable\. Falling back to CPU sampling\."),
        "main model on GPU; sampling fell back to CPU (GPU sampler library unavailable)",
    ),
    (
        "npu_generic_path",
        # LM runtime/executor/llm_litert_compiled_model_executor_factory.cc:215-217 (seen 0.18.1)
        re.compile(r"NPU backend requested, but TF_LITE_AUX is not packaged in the model\."),
        "NPU requested but the model has no NPU section (TF_LITE_AUX): generic compiler-plugin path",
    ),
    (
        "npu_no_compiler_plugin",
        # RT litert/runtime/compiled_model.cc:1244-1246 "Failed to apply compiler plugins: %s"
        # with RT litert/compiler/plugin/compiler_plugin.cc:1018 "No compiler plugin found"
        # (seen 0.18.1): no NPU compilation happened, XNNPACK ran the model on CPU
        re.compile(r"Failed to apply compiler plugins: No compiler plugin found"),
        "no NPU compiler plugin found: the model ran on CPU",
    ),
)

# The runtime's last word on a failed run: the binary's own (LM litert_lm_advanced_main.cc:377),
# or, in captures of the library through its C API, LM c/engine.cc:777 "Failed to create engine: "
# and LM c/conversation.cc:553 "Failed to send message: " (both seen 0.18.1).
_FINAL_ERROR = re.compile(r"(Failed to run litert_lm: |Failed to create engine: |Failed to send message: )")
# LM runtime/engine/litert_lm_lib.cc:499
_CHOOSE_BACKEND = re.compile(r"Choose backend: (\w+)")
# LM runtime/engine/litert_lm_lib.cc:259 (stdout, before each --multi_turns turn)
MULTI_TURN_PROMPT = "Please enter the prompt (or press Enter to end): "

# ABSL absl/log/internal/log_format.cc:176 "%c%02d%02d %02d:%02d:%02d.%06d %7d %s:%d] " and,
# before absl::InitializeLog, :103 "%c0000 00:00:%02d.%06d %7d " (then "file:line] ").
_GLOG = re.compile(
    r"^([IWEF])(?:\d{4} \d\d:\d\d:\d\d\.\d{6}|0000 00:00:\d+\.\d{6})\s+-?\d+\s+[^\s\]]+:\d+\]\s?"
)
# RT litert/c/internal/litert_logging.cc:76 "%s: " severity name, litert_logging.h:125
# "[%s:%d] " file:line; TFLite's minimal logger prints "INFO: ..." the same way.
_LITERT = re.compile(r"^(VERBOSE|DEBUG|INFO|WARNING|ERROR): (?:\[[^\]\s]+:\d+\] ?)?")
_SEVERITY = {"VERBOSE": "I", "DEBUG": "I", "INFO": "I", "WARNING": "W", "ERROR": "E"}
# RT litert/cc/litert_macros.h:629 (ErrorStatusBuilder::LogMessage): a nested error's text
# continues on lines starting with "└ ".
_CONTINUATION = "└"

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
    backend: str = ""  # what the binary says it chose (`Choose backend: gpu`)
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


@dataclass(frozen=True)
class _Line:
    severity: str  # I W E F, or "" for unprefixed text
    text: str  # without the log prefix


def _split(line: str) -> _Line:
    m = _GLOG.match(line)
    if m:
        return _Line(m.group(1), line[m.end() :])
    m = _LITERT.match(line)
    if m:
        return _Line(_SEVERITY[m.group(1)], line[m.end() :])
    return _Line("", line)


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
    for ln in out_lines:
        if _HEADER in ln or re.match(r"^\s*(Init Phases|Time to first token)", ln):
            break  # an older build's block on stdout: the answer came before it
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


def _final_error(lines: list[_Line]) -> tuple[str, str]:
    """The runtime's own last error (with its `└ ` continuation lines) and its status code."""
    idx = None
    for i, ln in enumerate(lines):
        if _FINAL_ERROR.search(ln.text):
            idx = i
    if idx is None:  # no verdict line: the last FATAL, then ERROR, line (linker errors included)
        for level in ("F", "E"):
            found = [i for i, ln in enumerate(lines) if ln.severity == level]
            if found:
                idx = found[-1]
                break
        if idx is None:
            found = [i for i, ln in enumerate(lines) if FAILURE_PATTERNS[0][1].search(ln.text)]
            idx = found[-1] if found else None
    if idx is None:
        return "", ""
    text = lines[idx].text.strip()
    m = _FINAL_ERROR.search(text)
    if m:
        text = text[m.start() :]
    parts = [text]
    for ln in lines[idx + 1 :]:
        if ln.severity or not ln.text.lstrip().startswith(_CONTINUATION):
            break
        parts.append(ln.text.strip())
    # absl::Status::ToString: "<CODE>: <message>" (ABSL absl/status/internal/status_internal.cc:147)
    code = re.search(r"(?:^|: )([A-Z][A-Z_]{3,}): ", text)
    return "\n".join(parts), code.group(1) if code else ""


def parse_benchmark_output(stdout: str, stderr: str = "") -> BenchmarkOutput:
    """Read the upstream binary's output; the BenchmarkInfo block may be on either stream."""
    raw_out = stdout.splitlines()
    out_split = [_split(ln) for ln in raw_out]
    err_split = [_split(ln) for ln in stderr.splitlines()]
    out_lines = [ln.text for ln in out_split]
    err_lines = [ln.text for ln in err_split]

    in_stdout = any(_HEADER in ln or _TTFT in ln for ln in out_lines)
    block, iterations = _benchmark_blocks(out_lines if in_stdout else err_lines)
    answer = _answer(raw_out, iterations)

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
    raw = stdout.splitlines() + stderr.splitlines()
    backend = ""
    for t in texts:
        m = _CHOOSE_BACKEND.search(t)
        if m:
            backend = m.group(1).lower()
    final, exit_status = _final_error(all_lines)
    has_verdict = bool(final) and bool(
        _FINAL_ERROR.search(final) or any(ln.severity == "F" for ln in all_lines)
    )
    has_benchmark = bool(block) and not no_prefill and bool(prefill or decode)

    failure = ""
    if has_verdict or not has_benchmark:
        for kind, pattern in FAILURE_PATTERNS:
            if pattern.search(final) or any(pattern.search(t) for t in raw):
                failure = kind
                break
        if (
            not failure
            and backend in BACKEND_EVIDENCE
            and any(BACKEND_EVIDENCE[backend].search(t) for t in texts)
        ):
            failure = BACKEND_FAILURE[backend]
        if not failure:
            failure = "runtime_error" if has_verdict else "no_benchmark"
    detail = ""
    if failure:
        detail = final
        if not detail and failure != "no_benchmark":
            pattern = dict(FAILURE_PATTERNS).get(failure)
            hit = next((i for i, t in enumerate(raw) if pattern and pattern.search(t)), None)
            detail = texts[hit].strip() if hit is not None else ""

    warnings: list[str] = []
    notes: list[str] = []
    for kind, pattern, note in FALLBACK_PATTERNS:
        if any(pattern.search(t) for t in texts):
            warnings.append(kind)
            notes.append(note)
    if failure == "gpu_unavailable":
        notes.insert(0, "GPU could not be used and the main model does not fall back to CPU")
    elif failure == "npu_dispatch_missing":
        notes.insert(0, "NPU dispatch runtime unusable: nothing ran")
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
        warnings=tuple(warnings),
        detail=detail,
        backend=backend,
        backend_note="; ".join(notes),
        mark_durations_ms=tuple(marks),
        exit_status=exit_status if failure else "",
    )
