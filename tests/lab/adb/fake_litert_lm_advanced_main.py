"""Lab stand-in for upstream `litert_lm_advanced_main`, run ON the emulated phone.

Same flags and the same output as the upstream binary, line for line where it matters: the answer
on stdout (with the `--multi_turns` prompt), absl- and LiteRT-style log lines on stderr, the
`BenchmarkInfo:` block on stderr without a prefix, the peak-memory lines, and on a failure
`Failed to run litert_lm: <status>` with the status code as exit code. Every string printed here
is upstream's, cited beside it as `repo/path:line @ pin`:
  LM = google-ai-edge/LiteRT-LM @ e533a5ac0da0 (main 2026-08-08), RT = google-ai-edge/LiteRT @
  b0f6c12088df (LM's LITERT_REF), ABSL = abseil/abseil-cpp @ 20260526.0 (LM's pin).
Inference is real (the `litert_lm` 0.18.1 runtime); its own stderr is silenced
(`litert_lm_set_min_log_level`) and its errors are read back with
`litert_lm_get_last_error_message()`, so a runtime failure is reported in the runtime's own words.

Started through a `#!/bin/sh` polyglot (conftest.Lab.runner_wrapper: a first line that is
`exec python3 "$0"` to sh and a no-op string expression to Python), so the driver execs ONE file
like the arm64 binary. Stdlib + litert_lm only; no `from __future__` import (it must be the
file's first statement).

Lab-only behaviour, standing for field situations of the real binary (docs/android.md,
"Upstream's messages"):
  --backend=gpu  the lab phone has no GPU accelerator library (no OpenCL): upstream's registry
                 fails to load one and the GPU-only compilation of the main model fails; there is
                 NO CPU fallback for the main model. `Failed to run litert_lm: INTERNAL: ...`, exit 13.
  --backend=npu  the lab phone stands for an NPU-compiled model with no vendor dispatch library:
                 `No usable Dispatch runtime found`, then `Failed to run litert_lm: INTERNAL: ...`,
                 exit 13.
  a prompt over --max_num_tokens: the runtime's own `INVALID_ARGUMENT: Input token ids are too
                 long. ...`, exit 3.
"""

import atexit
import ctypes
import math
import os
import re
import resource
import struct
import sys
import threading
import time

BOOL_FLAGS = {"benchmark", "async", "report_peak_memory_footprint", "multi_turns"}
KNOWN = BOOL_FLAGS | {
    "model_path", "backend", "input_prompt", "input_prompt_file", "max_output_tokens", "max_num_tokens",
    "vision_backend", "audio_backend", "num_cpu_threads", "cache_dir", "num_iterations", "log_sink_file",
    "constraint_regex", "litert_dispatch_lib_dir", "min_log_severity", "sampler_backend",
}  # fmt: skip
# LM runtime/engine/litert_lm_lib.cc:743 RE2 re_media("\\[(image|audio):([^\\s\\]]+)\\]")
MEDIA = re.compile(r"\[(image|audio):([^\s\]]+)\]")
# LM runtime/engine/litert_lm_lib.cc:259 (stdout, no newline, before each --multi_turns turn)
MULTI_TURN_PROMPT = "Please enter the prompt (or press Enter to end): "
# ABSL absl/status/status.cc:53-90 StatusCodeToStringView, by code
STATUS_CODE = {1: "CANCELLED", 2: "UNKNOWN", 3: "INVALID_ARGUMENT", 4: "DEADLINE_EXCEEDED", 5: "NOT_FOUND",
               6: "ALREADY_EXISTS", 7: "PERMISSION_DENIED", 8: "RESOURCE_EXHAUSTED", 9: "FAILED_PRECONDITION",
               10: "ABORTED", 11: "OUT_OF_RANGE", 12: "UNIMPLEMENTED", 13: "INTERNAL", 14: "UNAVAILABLE",
               15: "DATA_LOSS", 16: "UNAUTHENTICATED"}  # fmt: skip
# LM runtime/engine/io_types.cc:404 and siblings
SEPARATOR = "-" * 50


class Failure(Exception):
    """An absl::Status that ends the run: `Failed to run litert_lm: <CODE>: <message>`."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# ---------------------------------------------------------------------------------- logging
class Log:
    """stderr the way the upstream binary writes it."""

    warned = False

    @classmethod
    def absl(cls, severity: str, where: str, msg: str) -> None:
        """ABSL_LOG(severity) << msg, with absl's prefix. The binary never calls
        absl::InitializeLog, so the prefix has no time zone and the first message is preceded by
        ABSL absl/log/internal/log_sink_set.cc:101-104's one-time warning."""
        cls._warn_once()
        now = time.time()
        # ABSL absl/log/internal/log_format.cc:103 "%c0000 00:00:%02d.%06d %7d " + "file:line] "
        prefix = f"{severity}0000 00:00:{int(now):02d}.{int(now % 1 * 1e6):06d} {os.getpid():7d} {where}] "
        cls._write(prefix + msg)

    @classmethod
    def no_prefix(cls, line: str) -> None:
        """ABSL_LOG(INFO).NoPrefix() << line (LM runtime/engine/litert_lm_lib.cc:422)."""
        cls._warn_once()
        cls._write(line)

    @classmethod
    def litert(cls, severity: str, where: str, msg: str) -> None:
        """LITERT_LOG: RT litert/c/internal/litert_logging.cc:76-80 (Android: logcat AND stderr)
        "%s: " severity name, then litert_logging.h:125 "[%s:%d] " (__FILE_NAME__ and the line of
        the call's last line: the 0.18.1 runtime prints npu_registry.cc:34 for a call at 32-34)."""
        cls._write(f"{severity}: [{where}] {msg}")

    @classmethod
    def _warn_once(cls) -> None:
        if not cls.warned:
            cls.warned = True
            # ABSL absl/log/internal/log_sink_set.cc:101-104
            cls._write(
                "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR"
            )

    @staticmethod
    def _write(line: str) -> None:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


def parse_flags(argv: list[str]) -> dict[str, str]:
    flags: dict[str, str] = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if not arg.startswith("--"):
            raise SystemExit(f"ERROR: unexpected argument {arg!r}")
        name, eq, value = arg[2:].partition("=")
        if name not in KNOWN:
            # ABSL absl/flags/parse.cc:630-632 with absl/flags/usage_config.cc:134 "ERROR: "
            raise SystemExit(f"ERROR: Unknown command line flag '{name}'")
        if not eq:
            if name in BOOL_FLAGS:
                value = "true"
            else:
                i += 1
                value = argv[i] if i < len(argv) else ""
        flags[name] = value
        i += 1
    return flags


# ---------------------------------------------------------------------------------- figures
def absl_duration(seconds: float) -> str:
    """operator<<(std::ostream&, absl::Duration): ABSL absl/time/duration.cc:731-764 FormatDuration
    with AppendNumberUnit (:700-725) and the display units of :681-686."""

    def unit(n: float, abbr: str, prec: int, pow10: float) -> str:
        whole = math.floor(n)
        frac = math.floor((n - whole) * pow10 + 0.5)  # std::round
        if frac >= pow10:
            whole, frac = whole + 1, 0
        if whole == 0 and frac == 0:
            return ""
        text = str(int(whole))
        if frac:
            text += "." + str(int(frac)).zfill(prec).rstrip("0")
        return text + abbr

    ns = round(seconds * 1e9 * 4) / 4  # a Duration holds quarters of a nanosecond
    out = ""
    if ns < 0:
        out, ns = "-", -ns
    if ns < 1e9:
        if ns < 1e3:
            out += unit(ns, "ns", 2, 1e2)
        elif ns < 1e6:
            out += unit(ns / 1e3, "us", 5, 1e5)
        else:
            out += unit(ns / 1e6, "ms", 8, 1e8)
    else:
        hours, rest = divmod(ns, 3.6e12)
        minutes, rest = divmod(rest, 6e10)
        out += f"{int(hours)}h" if hours else ""
        out += f"{int(minutes)}m" if minutes else ""
        out += unit(rest / 1e9, "s", 11, 1e11)
    return out if out not in ("", "-") else "0"


def float_g(value: float, single: bool = False) -> str:
    """std::ostream's default formatting (precision 6, %g); `single` rounds to a float first."""
    if single:
        value = struct.unpack("f", struct.pack("f", value))[0]
    return f"{value:g}"


def benchmark_info_lines(phases: dict, prefill: list, decode: list) -> list[str]:
    """operator<<(std::ostream&, const BenchmarkInfo&): LM runtime/engine/io_types.cc:372-467.
    `phases` maps InitPhaseToString names (io_types.h:215-228) to seconds; prefill/decode are
    (tokens, seconds) per turn."""
    out = ["BenchmarkInfo:", f"  Init Phases ({len(phases)}):"]  # :375-376 (std::fixed, 2 digits: :373)
    if not phases:
        out.append("    No init phases recorded.")  # :378
    else:
        skip_session = "Init Conversation" in phases  # :387-399: session time is inside it
        for name in sorted(phases):  # a std::map: byte order
            if skip_session and name == "Init Session":
                continue
            out.append(f"    - {name}: {phases[name] * 1000:.2f} ms")  # :400-401
    # :347-357 GetTimeToFirstToken: first decode token + first prefill turn, 0 without data
    ttft = 0.0
    if prefill and decode and prefill[0][0] and decode[0][0]:
        ttft = decode[0][1] / decode[0][0] + prefill[0][1]
    out += [SEPARATOR, f"  Time to first token: {ttft:.2f} s"]  # :405-407
    for kind, turns in (("Prefill", prefill), ("Decode", decode)):  # :409-434
        out += [SEPARATOR, f"  {kind} Turns (Total {len(turns)} turns):"]
        if not turns:
            out.append(f"    No {kind.lower()} turns recorded.")
        for i, (tokens, secs) in enumerate(turns, 1):
            # :366-368 operator<<(BenchmarkTurnData) "Processed N tokens in <Duration> duration."
            out.append(f"    {kind} Turn {i}: Processed {tokens} tokens in {absl_duration(secs)} duration.")
            tps = tokens / secs if secs > 0 else 0.0  # :287-301 / :326-345 Get*TokensPerSec
            out.append(f"      {kind} Speed: {tps:.2f} tokens/sec.")
    # :436-449: the stand-in does not time text-to-token-ids turns; upstream prints this then
    out += [SEPARATOR, "  TextToTokenIds Turns (Total 0 turns):", "    No text to token ids turns recorded."]
    out.append(SEPARATOR)  # :451; "Mark Durations" (:453-458) only when marks exist: none here
    out.append(SEPARATOR)  # :465
    return out


class PeakMemory:
    """RT tflite/profiling/memory_usage_monitor.cc:56-71 every kMemoryCheckIntervalMs = 50
    (LM litert_lm_lib.cc:92), on RT tflite/profiling/memory_info.cc:84-94 (Linux): footprint =
    ru_maxrss, private = (VmSwap + ru_maxrss) * 1024."""

    def __init__(self) -> None:
        self.peak_bytes = 0
        self.private_bytes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    @staticmethod
    def usage() -> tuple[int, int]:
        maxrss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        swap_kb = 0
        try:
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith("VmSwap:"):
                        swap_kb = int(line.split()[1])
        except (OSError, ValueError, IndexError):
            pass
        return maxrss_kb, swap_kb

    def _sample(self) -> None:
        maxrss_kb, swap_kb = self.usage()
        self.peak_bytes = max(self.peak_bytes, maxrss_kb * 1024)
        self.private_bytes = max(self.private_bytes, (swap_kb + maxrss_kb) * 1024)

    def _loop(self) -> None:
        while not self._stop.wait(0.05):
            self._sample()

    def start(self) -> "PeakMemory":
        self._sample()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._sample()

    def log(self) -> None:
        """LM runtime/engine/litert_lm_lib.cc:466-471 LogMemoryUsage (no --log_sink_file)."""
        to_mb = 1024.0 * 1024.0  # memory_usage_monitor.h:111-113 BytesToMegabytes
        Log.absl(
            "I", "litert_lm_lib.cc:468", f"Peak system ram usage: {float_g(self.peak_bytes / to_mb, True)}MB."
        )
        maxrss_kb, swap_kb = self.usage()
        # RT tflite/profiling/memory_info.cc:156-163 MemoryUsage::AllStatsToStream; the heap
        # figures are -1 off glibc (memory_info.cc:95-99), as on a phone's bionic
        stats = (
            f"max resident set size/physical footprint = {float_g(maxrss_kb / 1000.0)} MB, "
            f"total non-mmapped heap size = {float_g(-1 / 1000.0 / 1000.0)} MB, "
            f"in-use heap size = {float_g(-1 / 1000.0 / 1000.0)} MB, "
            f"private footprint = {float_g((swap_kb + maxrss_kb) * 1024 / 1000.0 / 1000.0)} MB"
        )
        Log.absl("I", "litert_lm_lib.cc:469", "Memory usage: " + stats)
        Log.absl(
            "I",
            "litert_lm_lib.cc:471",
            f"Peak private footprint: {float_g(self.private_bytes / to_mb, True)}MB.",
        )


# ---------------------------------------------------------------------------------- inputs
def contents_of(lm, text: str, flags: dict[str, str]):
    """LM runtime/engine/litert_lm_lib.cc:728-804 BuildContentList: inline `[image:/abs]` /
    `[audio:/abs]` tags -> runtime Contents, with upstream's checks and messages."""
    parts = []
    pos = 0
    for m in MEDIA.finditer(text):
        kind, path = m.group(1), m.group(2)
        if not os.path.exists(path):
            # :758-759
            raise Failure(5, f"[ERROR] Media path {path} does not exist.")
        if m.start() > pos:
            parts.append(lm.Content.Text(text[pos : m.start()]))
        if kind == "image" and not flags.get("vision_backend"):
            # :773-777
            raise Failure(3, "Image backend is not specified. Please specify the vision backend "
                             "with --vision_backend=<cpu|gpu|npu>")  # fmt: skip
        if kind == "audio" and not flags.get("audio_backend"):
            # :779-783
            raise Failure(3, "Audio backend is not specified. Please specify the audio backend "
                             "with --audio_backend=<cpu|gpu>")  # fmt: skip
        parts.append(lm.Content.ImageFile(path) if kind == "image" else lm.Content.AudioFile(path))
        pos = m.end()
    if text[pos:] or not parts:
        parts.append(lm.Content.Text(text[pos:]))
    return lm.Contents.of(*parts)


FAULTS_FILE = "/data/local/tmp/edgefarm-lab-faults"  # lab only: `hang|kill|hog|lmkd|segv|abort TEXT` / `sleep S` / `spin S` / `work S` / `slower F`
LAB_LOGCAT = "/data/local/tmp/edgefarm-lab-logcat"  # the lab phone's main log (tests/lab/adb/sandbox.py LOGCAT)
# What real runs printed just before dying, verbatim from public captures (tests/unit/fixtures/real/):
SEGV_LAST_WORDS = (  # LiteRT-LM#1857 (lm1857_windows_gpu_segfault.log): a GPU run's last lines before SIGSEGV
    "Created LiteRT GpuEnvironment.",
    "# of threads to upload weights = 2",
    "# of threads to compile kernels = 1",
)
ABORT_LAST_WORDS = (  # LiteRT#9250 (rt9250_d8300_npu_abort.log): libc++abi's terminate, then SIGABRT
    "libc++abi: terminating due to uncaught exception of type",
    "N5armnn29ClRuntimeUnavailableExceptionE: Could not initialize the CL runtime.",
    "Error description: clGetPlatformIDs. CL error code: -1001",
)


def _die(words: tuple[str, ...], sig: int) -> None:
    sys.stdout.flush()
    sys.stderr.write("".join(w + "\n" for w in words))
    sys.stderr.flush()
    os.kill(os.getpid(), sig)


def lmkd_record(pid: int) -> None:
    """Append lmkd's record of killing `pid` to the lab phone's main log. Its words are lmkd.cpp's
    `Kill '%s' (%d), uid %d, oom_score_adj %d to free %ldkB rss, %ldkB swap; reason: %s`, in logcat's
    threadtime form exactly as the real capture tests/unit/fixtures/real/lmkd_rk3588_rknn249.txt
    (rknn-llm#249) shows them; uid 2000 is `shell`, which starts the runner."""
    rss_kb = 0
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss_kb = int(line.split()[1])
    stamp = time.strftime("%m-%d %H:%M:%S") + f".{int(time.time() * 1000) % 1000:03d}"
    record = (f"{stamp}   300   300 I lowmemorykiller: Kill 'litert_lm_advanced_main' ({pid}), uid 2000, "
              f"oom_score_adj 0 to free {rss_kb}kB rss, 0kB swap; reason: min watermark is breached and swap is low "
              f"(130588kB < 192936kB)\n")  # fmt: skip
    with open(LAB_LOGCAT, "a", encoding="utf-8") as f:
        f.write(record)


def _slower(fraction: float) -> None:
    """Wait `fraction` of this process's life so far, from its exec (/proc/self/stat's start time)."""
    with open("/proc/self/stat", encoding="ascii") as f:
        started = int(f.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
    with open("/proc/uptime", encoding="ascii") as f:
        lived = float(f.read().split()[0]) - started
    time.sleep(fraction * max(lived, 0.0))


def inject_fault(turns: list[str]) -> None:
    """Lab fault injection when a prompt contains the given text: hang (a stuck GPU/driver), die by
    SIGKILL from outside (a task killer, or the low-memory killer: the row says which only with
    evidence), by SIGSEGV or SIGABRT after a real run's last words; `sleep SECONDS` slows every
    sample (a slow phone); `spin SECONDS` keeps a CPU busy that long per sample (a load the lab's
    fuel gauge follows), `work SECONDS` does that much CPU work (slower on a throttled phone);
    `slower FRACTION` makes the whole process take that fraction longer (a slower unit of the same model:
    its start and its work slower alike, whatever load the host adds to them), waited at its exit."""
    try:
        with open(FAULTS_FILE, encoding="utf-8") as f:
            rules = [ln.rstrip("\n").split(" ", 1) for ln in f if " " in ln]
    except OSError:
        return
    prompt = "\n".join(turns)
    for action, text in rules:
        if action == "sleep":
            time.sleep(float(text))
        elif action == "slower":
            atexit.register(_slower, float(text))
        elif action in ("spin", "work"):  # spin: busy for S s of wall time; work: for S s of CPU time
            clock = time.monotonic if action == "spin" else time.process_time
            end = clock() + float(text)
            while clock() < end:
                pass
        elif text and text in prompt:
            if action == "hang":
                time.sleep(3600)
            elif action == "kill":
                os.kill(os.getpid(), 9)  # SIGKILL, as a task killer or the low-memory killer sends
            elif action == "hog":  # a runner killed while it holds memory: 64 MB touched, seen by the trace
                held = bytearray(64 << 20)
                held[:: 4096] = b"x" * len(held[:: 4096])
                time.sleep(0.8)  # several of the driver's 0.1 s trace rows
                os.kill(os.getpid(), 9)
            elif action == "lmkd":  # the low-memory killer's kill: its record in the main log, then SIGKILL
                lmkd_record(os.getpid())
                os.kill(os.getpid(), 9)
            elif action == "segv":
                _die(SEGV_LAST_WORDS, 11)
            elif action == "abort":
                _die(ABORT_LAST_WORDS, 6)


# ---------------------------------------------------------------------------------- the run
GPU_LIBS = (  # RT litert/runtime/accelerators/gpu_registry.cc:47-80 on Android (OpenCL, WebGPU builds)
    "libLiteRtGpuAccelerator.so", "libLiteRtClGlAccelerator.so", "libLiteRtOpenClAccelerator.so",
    "libLiteRtWebGpuAccelerator.so",
)  # fmt: skip


def create_environment(backend: str, dispatch_dir: str) -> None:
    """The LiteRT environment the engine creates (seen, in this order, from the 0.18.1 runtime)."""
    Log.litert(
        "INFO", "environment.cc:36", "Creating LiteRT environment with options"
    )  # RT litert/core/environment.cc:36
    if backend == "npu":  # LM runtime/util/litert_util.cc:60-107: a dispatch dir is set for NPU
        Log.litert("INFO", "npu_registry.cc:30", "NPU accelerator registered.")  # RT npu_registry.cc:30
    else:
        # RT litert/runtime/accelerators/npu_registry.cc:32-34 (seen 0.18.1 as npu_registry.cc:34)
        Log.litert("WARNING", "npu_registry.cc:34",
                   "NPU accelerator could not be loaded and registered: kLiteRtStatusErrorNotFound.")  # fmt: skip
    for lib in GPU_LIBS:  # RT gpu_registry.cc:100-101, no runtime library dir option: bare names
        Log.litert("INFO", "gpu_registry.cc:101", f"Attempting to load GPU accelerator({lib}).")
    Log.litert(
        "WARNING", "gpu_registry.cc:131", "GPU accelerator could not be loaded and registered."
    )  # :130-131; the same words in real runs: LiteRT-LM#1448, react-native-litert-lm#1 (fixtures/real)
    Log.litert("INFO", "cpu_registry.cc:75", "XNNPACK CPU accelerator registered.")  # RT cpu_registry.cc:75
    if backend == "gpu":
        # LM runtime/executor/llm_executor_settings_utils.cc:232 compiles the main model for kGpu
        # only; with no GPU accelerator no delegate applies and RT litert/runtime/compiled_model.cc:
        # 1053-1058 fails it. The nested frames are RT litert/cc/litert_macros.h:615-633
        # LogMessage ("ERROR: [file:line]" + "\n└ " at :629), at the LITERT_ macros on the way up:
        # LM llm_litert_compiled_model_executor_factory.cc:198, llm_litert_compiled_model_executor
        # .cc:2149, RT litert/cc/litert_compiled_model.h:1894. kErrorCompilation -> INTERNAL
        # (litert_macros.h:576-577).
        raise Failure(13, "ERROR: [runtime/executor/llm_litert_compiled_model_executor_factory.cc:198]\n"
                          "└ ERROR: [runtime/executor/llm_litert_compiled_model_executor.cc:2149]\n"
                          "└ ERROR: [external/litert/litert/cc/litert_compiled_model.h:1894]\n"
                          "└ Some ops are not accelerated. Add kLiteRtHwAcceleratorCpu to the compilation "
                          "accelerator set to allow using the CPU to run those.")  # fmt: skip
    if backend == "npu":
        # RT litert/runtime/dispatch/litert_dispatch.cc:119-120, dispatch_delegate.cc:115-116 (its
        # message: the LITERT_RETURN_IF_ERROR at :175-176), dispatch_delegate.cc:129-131; the
        # kernel-less delegate fails RT compiled_model.cc:1038-1043 (kErrorRuntimeFailure ->
        # INTERNAL, litert_macros.h:550-551).
        # the same words in real runs: LiteRT#7787 (No dispatch library found in ...), LiteRT-LM#1466
        # (Failed to initialize Dispatch API / ... No usable Dispatch runtime found): fixtures/real
        Log.litert("ERROR", "litert_dispatch.cc:120", f"No dispatch library found in {dispatch_dir}")
        Log.litert("ERROR", "dispatch_delegate.cc:116", "Failed to initialize Dispatch API: "
                   "ERROR: [external/litert/litert/runtime/dispatch/dispatch_delegate.cc:175]")  # fmt: skip
        Log.litert("ERROR", "dispatch_delegate.cc:131",
                   "Failed to create a dispatch delegate kernel: No usable Dispatch runtime found")  # fmt: skip
        raise Failure(13, "ERROR: [external/litert/litert/cc/litert_compiled_model.h:1894]\n"
                          "└ Failed to modify graph with delegate")  # fmt: skip


def read_turns(flags: dict[str, str]) -> list[str]:
    if flags.get("multi_turns") == "true":
        # LM runtime/engine/litert_lm_lib.cc:258-263: prompt, getline, stop at an empty line
        turns = []
        for line in sys.stdin:
            line = line.rstrip("\n")
            if not line:
                break
            turns.append(line)
        return turns
    if flags.get("input_prompt_file"):
        with open(flags["input_prompt_file"], encoding="utf-8") as f:
            return [f.read()]
    # LM runtime/engine/litert_lm_advanced_main.cc:127
    return [flags.get("input_prompt", "What is the tallest building in the world?")]


def runtime_failure(lib) -> Failure:
    """The runtime's own status (code + `CODE: message`, as absl::Status prints it)."""
    code = lib.litert_lm_get_last_error_code()
    message = (lib.litert_lm_get_last_error_message() or b"").decode("utf-8", "replace")
    prefix = STATUS_CODE.get(code, "UNKNOWN") + ": "
    return Failure(code or 2, message.removeprefix(prefix))


def run(flags: dict[str, str], turns: list[str]) -> None:
    backend = flags.get("backend", "cpu")
    multi = flags.get("multi_turns") == "true"
    Log.absl("I", "litert_lm_lib.cc:499", f"Choose backend: {backend}")
    if flags.get("vision_backend"):
        Log.absl("I", "litert_lm_lib.cc:504", f"Provided vision backend: {flags['vision_backend']}")
    if flags.get("audio_backend"):
        Log.absl("I", "litert_lm_lib.cc:510", f"Provided audio backend: {flags['audio_backend']}")
    if flags.get("benchmark") == "true" and multi and flags.get("async", "true") == "true":
        Log.absl("E", "litert_lm_lib.cc:671",  # :671-672
                 "Benchmark with multi-turns and async do not show results, use sync mode instead.")  # fmt: skip
    Log.absl("I", "litert_lm_lib.cc:688", "Creating engine")
    model = flags.get("model_path", "")
    create_environment(backend, flags.get("litert_dispatch_lib_dir") or os.path.dirname(model))

    import litert_lm as lm
    from litert_lm import _ffi

    lm.set_min_log_severity(_ffi.LogSeverity.SILENT)  # its own stderr would not be upstream's
    lib = _ffi._get_lib()
    lib.litert_lm_get_last_error_code.restype = ctypes.c_int
    lib.litert_lm_get_last_error_message.restype = ctypes.c_char_p
    threads = flags.get("num_cpu_threads")
    try:
        engine = lm.Engine(
            model,
            backend=lm.Backend.CPU(thread_count=int(threads)) if threads else lm.Backend.CPU(),
            max_num_tokens=int(flags["max_num_tokens"]) if flags.get("max_num_tokens") else None,
            cache_dir=flags.get("cache_dir") or ":nocache",
            vision_backend=lm.Backend.CPU() if flags.get("vision_backend") else None,
            audio_backend=lm.Backend.CPU() if flags.get("audio_backend") else None,
            enable_benchmark=True,
        )
    except Exception:  # noqa: BLE001 - the runtime's generic error; its status is read back
        raise runtime_failure(lib) from None
    # RT tflite/delegates/xnnpack/xnnpack_delegate.cc:681-682 (TFLite's "INFO: " logger; seen 0.18.1)
    Log._write("INFO: Created TensorFlow Lite XNNPACK delegate for CPU.")
    max_out = int(flags.get("max_output_tokens") or 0) or None
    iterations = max(1, int(flags.get("num_iterations") or 1))
    with engine:
        for _ in range(iterations):  # LM runtime/engine/litert_lm_lib.cc:821-917
            memory = PeakMemory().start() if flags.get("report_peak_memory_footprint") == "true" else None
            Log.absl("I", "litert_lm_lib.cc:856", "Creating conversation")
            t0 = time.perf_counter()
            conv = engine.create_conversation(
                sampler_config=lm.SamplerConfig(top_k=1), max_output_tokens=max_out
            )
            conversation_s = time.perf_counter() - t0
            prefill: list[tuple[int, float]] = []
            decode: list[tuple[int, float]] = []
            init_total_s = 0.0
            with conv:
                if multi:
                    Log.absl("I", "litert_lm_lib.cc:864", "Running multi-turns conversation")
                else:
                    Log.absl("I", "litert_lm_lib.cc:868", "Running single-turn conversation")
                for turn in turns:
                    if multi:
                        sys.stdout.write(MULTI_TURN_PROMPT)
                    try:
                        message = conv.send_message(contents_of(lm, turn, flags))
                    except Failure as e:
                        if not multi:
                            raise
                        sys.stdout.write(e.message + "\n")  # :269-272 a bad turn is skipped
                        continue
                    except Exception:  # noqa: BLE001
                        sys.stdout.flush()
                        raise runtime_failure(lib) from None
                    # LM runtime/engine/litert_lm_lib.cc PrintMessage: the text, then a newline
                    text = str(message)
                    sys.stdout.write(text if text.endswith("\n") else text + "\n")
                    sys.stdout.flush()
                    info = conv.get_benchmark_info()
                    init_total_s = info.init_time_in_second or init_total_s
                    for rows, tokens, tps in (
                        (prefill, info.last_prefill_token_count, info.last_prefill_tokens_per_second),
                        (decode, info.last_decode_token_count, info.last_decode_tokens_per_second),
                    ):
                        rows.append((tokens, tokens / tps if tps else 0.0))
                if multi:
                    sys.stdout.write(MULTI_TURN_PROMPT)  # the read that ended the loop
                    sys.stdout.flush()
            if flags.get("benchmark") == "true":
                phases = {"Init Conversation": conversation_s}
                if init_total_s:
                    phases["Init Total"] = init_total_s
                for line in benchmark_info_lines(phases, prefill, decode):
                    Log.no_prefix(line)
            if memory:
                memory.stop()
                memory.log()


def main(argv: list[str]) -> int:
    flags = parse_flags(argv)
    turns = read_turns(flags)
    inject_fault(turns)
    try:
        run(flags, turns)
    except Failure as e:
        sys.stdout.flush()
        # LM runtime/engine/litert_lm_advanced_main.cc:377 `<< "Failed to run litert_lm: " <<
        # status` (absl::Status prints "CODE: message", ABSL status_internal.cc:147), then :378
        # returns the status code as exit code.
        Log.absl("E", "litert_lm_advanced_main.cc:377",
                 f"Failed to run litert_lm: {STATUS_CODE.get(e.code, 'UNKNOWN')}: {e.message}")  # fmt: skip
        return e.code
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
