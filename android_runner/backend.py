"""What the runtime's own log says: how it failed, and which backend really ran.

One pure classifier for every runner: the host's parser of the upstream binary's output
(orchestrator/telemetry/benchmark_output.py), the Python runner (android_runner/litert_runner.py,
which captures the runtime's stderr around engine creation and each sample) and the native
runner's host side. Stdlib only: this module is copied to boards next to the runner.

Real logs interleave, prefix and truncate the runtime's words (tests/unit/fixtures/real/ holds
captures from public issue threads): lines come with absl's glog prefix, LiteRT's
`SEVERITY: [file:line] `, logcat's `MM-DD hh:mm:ss.mmm pid tid S tag: ` or Android Studio's
`hh:mm:ss.mmm pid-tid tag S  `, and a pasted line may stop mid-word. So every pattern below
matches a stem that survives truncation, and `split_line` strips the known prefixes first.

Patterns are taken from upstream source, cited `repo/path:line @ pin` with the pins of
orchestrator/telemetry/benchmark_output.py (LM = google-ai-edge/LiteRT-LM @ e533a5ac0da0,
RT = google-ai-edge/LiteRT @ b0f6c12088df, ABSL = abseil/abseil-cpp @ 20260526.0), or from a
real capture named by its fixture in tests/unit/fixtures/real/README.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

BACKENDS = ("cpu", "gpu", "npu")  # what --backend and devices.yaml `backend:` take, everywhere

# ------------------------------------------------------------------ log lines

# ABSL absl/log/internal/log_format.cc:176 "%c%02d%02d %02d:%02d:%02d.%06d %7d %s:%d] " and, before
# absl::InitializeLog, :103 "%c0000 00:00:%02d.%06d %7d " (then "file:line] ").
GLOG = re.compile(
    r"^([IWEF])(?:\d{4} \d\d:\d\d:\d\d\.\d{6}|0000 00:00:\d+\.\d{6})\s+-?\d+\s+[^\s\]]+:\d+\]\s?"
)
# RT litert/c/internal/litert_logging.cc:76 "%s: " severity, litert_logging.h:125 "[%s:%d] "; a
# nested error repeats the severity ("ERROR: ERROR: [...]", real: lm1448_emulator_gpu_head.log).
_LITERT = re.compile(
    r"^(VERBOSE|DEBUG|INFO|WARNING|ERROR)(?:: (?:VERBOSE|DEBUG|INFO|WARNING|ERROR))*: (?:\[[^\]\s]+:\d+\] ?)?"
)
_SEVERITY = {"V": "I", "D": "I", "I": "I", "W": "W", "E": "E", "F": "F"}
# logcat -v threadtime "02-19 10:07:32.809 20624 20624 E litert  : " (real: lm1466_dispatch_api_logcat.log)
_LOGCAT = re.compile(r"^\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\s+\d+\s+\d+ ([VDIWEF]) [^:]*?\s*: ")
# Android Studio's logcat "13:52:45.328 20824-20847 litert   E  " (real: rt5594_sm8750_dispatch_truncated.log)
_STUDIO = re.compile(
    r"^(?:\d{4}-\d\d-\d\d )?\d{1,2}:\d\d:\d\d\.\d{3}\s+\d+-\d+\s+\S+(?:\s+\S+)?\s+([VDIWEF])\s\s"
)
# logcat -v tag / brief "litert: [file:line] " (real: rt7787_pixel10_no_dispatch_library.log)
_TAG = re.compile(r"^(litert|tflite|qnn|litert_lm|libc): (?=\[|\w)")
# RT litert/cc/litert_macros.h:629 (ErrorStatusBuilder::LogMessage): a nested error continues on
# lines starting with "└ ".
CONTINUATION = "\u2514"


@dataclass(frozen=True)
class LogLine:
    severity: str  # I W E F, or "" for unprefixed text
    text: str  # without the log prefix(es)
    raw: str = ""  # the line as printed


def split_line(line: str) -> LogLine:
    """One log line -> its severity and text, logcat/glog/LiteRT prefixes stripped (in that order)."""
    raw, severity = line, ""
    for outer in (_LOGCAT, _STUDIO):
        m = outer.match(line)
        if m:
            severity, line = _SEVERITY[m.group(1)], line[m.end() :]
            break
    m = _TAG.match(line)
    if m:
        line = line[m.end() :]
    m = GLOG.match(line)
    if m:
        return LogLine(m.group(1), line[m.end() :], raw)
    m = _LITERT.match(line)
    if m:
        return LogLine(severity or _SEVERITY[m.group(1)[0]], line[m.end() :], raw)
    return LogLine(severity, line, raw)


def split_lines(text: str) -> list[LogLine]:
    return [split_line(ln) for ln in text.splitlines()]


# ------------------------------------------------------------------ failure kinds (decisive)
# Checked in this order over the runtime's final error and then every line: the first kind that
# matches names the failure. android_runner/status.classify reads "oom" and "crash".
FAILURE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # AOSP bionic linker/linker_main.cpp `__linker_cannot_link`: "CANNOT LINK EXECUTABLE \"%s\": %s\n"
    ("link_error", re.compile(r'CANNOT LINK EXECUTABLE "')),
    (
        "oom",
        re.compile(
            # libc++ std::bad_alloc::what() == "std::bad_alloc"
            r"std::bad_alloc"
            # RT litert/cc/litert_macros.h:548 kErrorMemoryAllocationFailure -> "RESOURCE_EXHAUSTED: "
            r"|\bRESOURCE_EXHAUSTED: "
            # RT tflite/delegates/gpu/cl/util.cc:39 / :43 (CLErrorCodeToString)
            r"|Memory object allocation failure|Out of host memory"
            # Vulkan's VkResult name, as the WebGPU/Vulkan path prints it (LiteRT-LM#2584's title)
            r"|VK_ERROR_OUT_OF_(?:DEVICE|HOST)_MEMORY"
        ),
    ),
    (
        "truncated_model",
        re.compile(
            # LM support/util/memory_mapped_file_posix.cc:115-119 (seen 0.18.1)
            r"Length \(\d+\) and offset \(\d+\) are too large for file size \(\d+\)"
            # older builds' RET_CHECK text (real: lm1858_pixel9_length_offset.log)
            r"|Length and offset too large"
        ),
    ),
    # LM runtime/core/tasks.cc:468-471 (seen 0.18.1; real: haos_addon_context_overflow.log)
    ("context_overflow", re.compile(r"Input token ids are too long")),
    (
        "npu_context_error",
        re.compile(
            # RT litert/vendors/*/dispatch/dispatch_api.cc "Failed to create context from context
            # binary: " (real: lm1437_mt6993_context_binary.log, rt5141_qnn_context_binary.log)
            r"Failed to create context from context binary"
            r"|Failed to create QNN context"
        ),
    ),
    (
        "npu_dispatch_missing",
        re.compile(
            # RT litert/runtime/dispatch/dispatch_delegate.cc:129-131 (a pasted line may stop
            # mid-word: real rt5594_sm8750_dispatch_truncated.log ends "runtime foun")
            r"Failed to create a dispatch delegate kernel|No usable Dispatch runtime"
            # RT dispatch_delegate.cc:115-116 (real: lm3109_d8300_dispatch.log, without the ": ")
            r"|Failed to initialize Dispatch API"
            # RT litert/runtime/dispatch/litert_dispatch.cc:119-120
            r"|No dispatch library found in "
            # litert-lm-api 0.18.1 litert_lm/interfaces.py:113-131 (the Python API's NPU: OpenVINO on Windows only)
            r"|NPU is supported only for Intel OpenVINO on Windows"
        ),
    ),
    (
        "gpu_unavailable",
        re.compile(
            # RT litert/runtime/compiled_model.cc:1053-1058: no CPU fallback for the main model
            r"Some ops are not accelerated\. Add kLiteRtHwAcceleratorCpu"
            # RT litert/runtime/gpu_environment.cc:205-206
            r"|Failed to load OpenCL for LiteRT\."
            # RT tflite/delegates/gpu/cl/opencl_wrapper.cc:170 (and :111 on Windows)
            r"|Can not open OpenCL library on this device"
            # RT ml_drift_delegate/delegate/delegate_opencl.cc:635
            r"|Failed to open OpenCL library: "
            # ml_drift's loader, in the 0.18.1 .so (real: lm2241_pixel5_opencl_not_found.log)
            r"|Can not find OpenCL library on this device"
            # RT ml_drift_delegate/delegate/delegate_webgpu.cc:285-286 (seen 0.18.1)
            r"|Failed to initialize WebGPU environment: "
        ),
    ),
    # RT tflite/delegates/gpu/cl/util.cc:84 CLErrorCodeToString(CL_INVALID_COMMAND_QUEUE)
    ("opencl_error", re.compile(r"Invalid command queue")),
    (
        "aborted",
        # absl::Status ABORTED as the runtime returns it when the GPU read-back times out
        # (real: lm2757_serve_aborted_timeout.log, lm2338_jetson_opencl_dlopen_aborted.log)
        re.compile(r"\bABORTED: .*(?:timeout|timed out)", re.IGNORECASE),
    ),
    (
        "model_load",
        re.compile(
            # RT litert/cc/internal/scoped_file_posix.h:41 (seen 0.18.1)
            r"open\(\) failed: "
            # LM schema/core/litertlm_read.cc:79 (seen 0.18.1)
            r"|Invalid magic number or failed to read: "
            # LM runtime/components/model_resources_litert_lm.cc:126 / :153 (seen 0.18.1)
            r"| not found in the model\."
            # LM runtime/util/litert_lm_loader.cc:299
            r"|Failed to map section: "
        ),
    ),
    (
        "op_unsupported",
        # TFLite's "Node number %d (%s) failed to prepare." (tensorflow/lite/core/subgraph.cc;
        # real: lm2461_gemma12b_gpu_prepare.log, rt5141_qnn_context_binary.log)
        re.compile(r"Node number \d+ \(\w+\) failed to prepare"),
    ),
    (
        "crash",  # last: a kind that names the cause beats the bare fact of a death
        re.compile(
            # ABSL absl/log/internal/log_format.cc:103/:176: `F` = ABSL_LOG(FATAL) / CHECK failure.
            r"^F(?:\d{4} \d\d:\d\d:\d\d\.\d{6}|0000 00:00:\d+\.\d{6})\s+-?\d+ [^\s\]]+:\d+\] "
            # a shell's report of a death by signal (real: lm1857_windows_gpu_segfault.log,
            # rt9250_d8300_npu_abort.log "Aborted (core dumped)")
            r"|^(?:Segmentation fault|Aborted|Bus error|Illegal instruction)(?: \(core dumped\))?\s*$"
            # Android's tombstone / debuggerd (real: lm2977_tombstone_sigsegv.log)
            r"|^signal \d+ \(SIG[A-Z]+\), code "
            r"|Fatal signal \d+ \(SIG[A-Z]+\)"
            # libc++abi's terminate handler (real: rt9250_d8300_npu_abort.log)
            r"|^libc\+\+abi: terminating"
        ),
    ),
)
FAILURE_KINDS = tuple(kind for kind, _ in FAILURE_PATTERNS)

# ------------------------------------------------------------------ backend evidence
# Lines that say a backend could not be had. The accelerator registry prints them for EVERY
# accelerator it tries at each environment creation, whatever backend was asked: they only decide
# the row when that backend was the one requested.
UNAVAILABLE: dict[str, re.Pattern[str]] = {
    # RT litert/runtime/accelerators/gpu_registry.cc:130-131; older builds' auto_registration.cc
    # (real: lm1448_emulator_gpu_head.log, rn1_ios_gpu_not_registered.log, rt2395_gpu_symbol_missing.log)
    "gpu": re.compile(r"GPU accelerator could not be (?:dynamically )?loaded"),
    # RT litert/runtime/accelerators/npu_registry.cc:32-34 (seen 0.18.1; real: lm3109_d8300_dispatch.log)
    "npu": re.compile(r"NPU accelerator could not be loaded"),
}
FAILURE_OF = {"gpu": "gpu_unavailable", "npu": "npu_dispatch_missing"}
# Runs that answered on another engine than asked (the main model), or where only a part fell back.
FELL_BACK_TO_CPU: tuple[tuple[str, re.Pattern[str]], ...] = (
    # LM runtime/executor/llm_litert_compiled_model_executor_factory.cc:215-217 (seen 0.18.1)
    ("npu_generic_path", re.compile(r"NPU backend requested, but TF_LITE_AUX is not packaged in the model")),
    # RT litert/runtime/compiled_model.cc:1244-1246 + compiler_plugin.cc:1018 (seen 0.18.1)
    ("npu_no_compiler_plugin", re.compile(r"Failed to apply compiler plugins: No compiler plugin found")),
)
# LM runtime/components/sampler_factory.cc:764-768 (seen 0.18.1): the model ran on the GPU, sampling on CPU
SAMPLER_FELL_BACK = re.compile(r"GPU sampler unavailable\. Falling back to CPU sampling\.")


@dataclass(frozen=True)
class BackendVerdict:
    """What ran, against what was asked, in the runtime's own words."""

    requested: str  # cpu | gpu | npu | "" (not known)
    ran: str = ""  # the engine the answer was computed on; "" when nothing was answered
    failure: str = ""  # "" | gpu_unavailable | npu_dispatch_missing | backend_fallback
    flags: tuple[str, ...] = ()  # e.g. gpu_sampler_cpu_fallback: ran as asked, a part fell back
    evidence: str = ""  # the runtime's line(s) behind the verdict

    @property
    def fell_back(self) -> bool:
        return self.failure == "backend_fallback"

    def merged(self, later: BackendVerdict) -> BackendVerdict:
        """This verdict (engine creation) with what the runtime said later (a session, a sample)."""
        if later.fell_back and not self.fell_back:
            return BackendVerdict(
                self.requested, later.ran, later.failure, self.flags + later.flags, later.evidence
            )
        new_flags = tuple(f for f in later.flags if f not in self.flags)
        if not new_flags:
            return self
        evidence = "\n".join(x for x in (self.evidence, later.evidence) if x)
        return BackendVerdict(self.requested, self.ran, self.failure, self.flags + new_flags, evidence)


def _first(lines: Sequence[str], pattern: re.Pattern[str]) -> str:
    i = next((i for i, ln in enumerate(lines) if pattern.search(ln)), None)
    return "" if i is None else words_at(lines, i)


def classify_backend(texts: Iterable[str], requested: str, answered: bool) -> BackendVerdict:
    """The runtime's log lines (prefixes stripped) -> what ran.

    `answered`: the runtime produced an answer (and figures). A requested GPU/NPU that the log
    says could not be had is `gpu_unavailable` / `npu_dispatch_missing` when nothing was answered,
    and `backend_fallback` (ran = cpu) when something was: the row must not claim the GPU/NPU.
    """
    lines = [t for t in texts if t.strip()]
    requested = requested.lower()
    flags: list[str] = []
    evidence: list[str] = []
    hit = _first(lines, SAMPLER_FELL_BACK)
    if hit and requested == "gpu":
        flags.append("gpu_sampler_cpu_fallback")
        evidence.append(hit)
    for kind, pattern in FELL_BACK_TO_CPU:
        hit = _first(lines, pattern)
        if hit and requested == "npu":
            flags.append(kind)
            evidence.append(hit)
    unavailable = _first(lines, UNAVAILABLE[requested]) if requested in UNAVAILABLE else ""
    fell_back = bool(unavailable) or any(f in ("npu_generic_path", "npu_no_compiler_plugin") for f in flags)
    if unavailable:
        evidence.insert(0, unavailable)
    if fell_back and not answered:
        return BackendVerdict(requested, "", FAILURE_OF.get(requested, ""), tuple(flags), "\n".join(evidence))
    if fell_back:
        return BackendVerdict(requested, "cpu", "backend_fallback", tuple(flags), "\n".join(evidence))
    return BackendVerdict(requested, requested if answered else "", "", tuple(flags), "\n".join(evidence))


@dataclass(frozen=True)
class RuntimeFailure:
    kind: str
    detail: str  # the runtime's own line(s), never empty


def find_failure(lines: Sequence[LogLine], first: str = "") -> RuntimeFailure | None:
    """The first decisive failure kind: in `first` (the runtime's final error) then in every line."""
    texts = [ln.text for ln in lines]
    for kind, pattern in FAILURE_PATTERNS:
        if first and pattern.search(first):
            return RuntimeFailure(kind, first)
        for i, ln in enumerate(lines):
            if pattern.search(ln.text) or pattern.search(ln.raw):
                return RuntimeFailure(kind, words_at(texts, i))
    return None


def words_at(texts: Sequence[str], i: int) -> str:
    """Line i with its `└ ` continuation lines (and the line after a libc++abi `... of type`)."""
    parts = [texts[i].strip()]
    for t in texts[i + 1 :]:
        if t.lstrip().startswith(CONTINUATION) or (parts[-1].endswith(" of type") and len(parts) == 1):
            parts.append(t.strip())
        else:
            break
    return "\n".join(parts)


def log_tail(texts: Sequence[str], n: int = 3) -> str:
    """The last n non-empty lines: the runtime's last words when none matched a known failure."""
    kept = [t.strip() for t in texts if t.strip()]
    return "\n".join(kept[-n:])


# Failures that mean "this device cannot give the backend asked", not "this model is broken".
BACKEND_UNAVAILABLE_KINDS = ("gpu_unavailable", "npu_dispatch_missing", "npu_context_error")


def engine_failure(log_text: str, requested: str, exception: str = "") -> tuple[str, str]:
    """Why an engine was not created: (failure kind or "", the runtime's words) from its log.

    The words are the line that names the kind (with its continuation lines), then the log's last
    lines (the engine's own verdict)."""
    lines = split_lines(log_text)
    found = find_failure(lines, exception)
    verdict = classify_backend([ln.text for ln in lines], requested, answered=False)
    kind = found.kind if found is not None else verdict.failure
    words = found.detail if found is not None else verdict.evidence
    last = log_tail([ln.raw for ln in lines], 6)
    return kind, "\n".join(x for x in (words, last) if x) or exception
