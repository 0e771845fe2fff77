"""Lab stand-in for upstream `litert_lm_advanced_main`, run ON the emulated phone.

Same flags, same output shape (answer on stdout; logs on stderr; a `BenchmarkInfo:` block and
`Peak ...` memory lines), real inference on the real `litert_lm` runtime. Started through a
`#!/bin/sh` polyglot (conftest.Lab.runner_wrapper: a first line that is `exec python3 "$0"` to
sh and a no-op string expression to Python), so the driver execs ONE file like the arm64 binary.
Stdlib + litert_lm only; no `from __future__` import (it must be the file's first statement).

Lab-only behaviour that mimics field failures of the real binary:
  --backend=gpu  OpenCL is "not found": warn on stderr and fall back to CPU (as upstream does)
  --backend=npu  "No usable Dispatch runtime found", exit 1
"""

import os
import re
import sys
import threading
import time

BOOL_FLAGS = {"benchmark", "async", "report_peak_memory_footprint", "multi_turns"}
KNOWN = BOOL_FLAGS | {
    "model_path", "backend", "input_prompt", "input_prompt_file", "max_output_tokens", "max_num_tokens",
    "vision_backend", "audio_backend", "num_cpu_threads", "cache_dir", "num_iterations", "log_sink_file",
    "constraint_regex", "litert_dispatch_lib_dir",
}  # fmt: skip
MEDIA = re.compile(r"\[(image|audio):([^\]]+)\]")


def log(level: str, msg: str) -> None:
    now = time.time()
    stamp = time.strftime("%m%d %H:%M:%S", time.localtime(now)) + f".{int(now % 1 * 1e6):06d}"
    sys.stderr.write(f"{level}{stamp} {os.getpid():>7} litert_lm_advanced_main.cc:42] {msg}\n")
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


class PeakMemory:
    """Samples /proc/self/status every 50 ms, like the upstream flag does."""

    def __init__(self) -> None:
        self.rss_kb = 0
        self.private_kb = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _sample(self) -> None:
        fields: dict[str, int] = {}
        try:
            with open("/proc/self/status") as f:
                for line in f:
                    key, _, rest = line.partition(":")
                    if key in ("VmRSS", "VmHWM", "RssAnon", "VmSwap"):
                        fields[key] = int(rest.split()[0])
        except (OSError, ValueError, IndexError):
            return
        self.rss_kb = max(self.rss_kb, fields.get("VmHWM", 0), fields.get("VmRSS", 0))
        self.private_kb = max(self.private_kb, fields.get("RssAnon", 0) + fields.get("VmSwap", 0))

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


def contents_of(lm, text: str):
    """Prompt text with inline `[image:/abs]` / `[audio:/abs]` tags -> runtime Contents."""
    parts = []
    pos = 0
    for m in MEDIA.finditer(text):
        if m.start() > pos and text[pos : m.start()].strip():
            parts.append(lm.Content.Text(text[pos : m.start()]))
        path = m.group(2)
        parts.append(lm.Content.ImageFile(path) if m.group(1) == "image" else lm.Content.AudioFile(path))
        pos = m.end()
    if text[pos:].strip() or not parts:
        parts.append(lm.Content.Text(text[pos:]))
    return lm.Contents.of(*parts)


def fmt_duration(seconds: float) -> str:
    """Upstream mixes units in one block; so do we."""
    if seconds >= 1.0:
        return f"{seconds:.7g}s"
    if seconds >= 0.001:
        return f"{seconds * 1000:.7g}ms"
    return f"{seconds * 1e6:.5g}us"


def backend_of(lm, name: str, threads: str | None):
    if name in ("", "cpu"):
        return lm.Backend.CPU(thread_count=int(threads)) if threads else lm.Backend.CPU()
    raise ValueError(name)


FAULTS_FILE = "/data/local/tmp/edgefarm-lab-faults"  # lab only: `hang TEXT` / `kill TEXT` / `sleep S`


def inject_fault(turns: list[str]) -> None:
    """Lab fault injection: hang (a stuck GPU/driver) or die by SIGKILL (the low-memory killer)
    when a prompt contains the given text; `sleep SECONDS` slows every sample (a slow phone)."""
    try:
        with open(FAULTS_FILE, encoding="utf-8") as f:
            rules = [ln.rstrip("\n").split(" ", 1) for ln in f if " " in ln]
    except OSError:
        return
    prompt = "\n".join(turns)
    for action, text in rules:
        if action == "sleep":
            time.sleep(float(text))
        elif text and text in prompt:
            if action == "hang":
                time.sleep(3600)
            elif action == "kill":
                os.kill(os.getpid(), 9)  # SIGKILL, as the low-memory killer sends


def main(argv: list[str]) -> int:
    flags = parse_flags(argv)
    model = flags.get("model_path", "")
    if not model or not os.path.isfile(model):
        log("E", f"NOT_FOUND: model file not found: {model}")
        return 1
    backend = flags.get("backend", "cpu")
    if backend == "npu":
        log("E", "No usable Dispatch runtime found")
        log("E", "INTERNAL: Failed to create engine")
        return 1
    if backend == "gpu":
        log("W", 'OpenCL library not found: dlopen failed: library "libOpenCL.so" not found')
        log("W", "GPU accelerator not available, falling back to CPU.")
        backend = "cpu"
    if flags.get("multi_turns") == "true":
        turns = [ln.rstrip("\n") for ln in sys.stdin if ln.strip()]
    elif flags.get("input_prompt_file"):
        with open(flags["input_prompt_file"], encoding="utf-8") as f:
            turns = [f.read().rstrip("\n")]
    else:
        turns = [flags.get("input_prompt", "What is Tensor Processing Unit?")]

    inject_fault(turns)
    memory = PeakMemory().start() if flags.get("report_peak_memory_footprint") == "true" else None
    import litert_lm as lm

    vision = lm.Backend.CPU() if flags.get("vision_backend") else None
    audio = lm.Backend.CPU() if flags.get("audio_backend") else None
    log("I", f"Loading model {model}")
    t0 = time.perf_counter()
    engine = lm.Engine(
        model,
        backend=backend_of(lm, backend, flags.get("num_cpu_threads")),
        max_num_tokens=int(flags["max_num_tokens"]) if flags.get("max_num_tokens") else None,
        cache_dir=flags.get("cache_dir") or ":nocache",
        vision_backend=vision,
        audio_backend=audio,
        enable_benchmark=True,
    )
    executor_s = time.perf_counter() - t0
    stats: list[tuple[int, float, int, float]] = []
    ttft_s = 0.0
    init_s = executor_s
    failed = ""
    max_out = int(flags.get("max_output_tokens") or 0) or None
    with engine:
        conv = engine.create_conversation(sampler_config=lm.SamplerConfig(top_k=1), max_output_tokens=max_out)
        with conv:
            for i, turn in enumerate(turns):
                try:
                    message = conv.send_message(contents_of(lm, turn))
                except Exception as e:  # noqa: BLE001 - the runtime's generic error
                    failed = f"INTERNAL: {e}"
                    break
                text = str(message)
                sys.stdout.write(text + "\n")
                sys.stdout.flush()
                info = conv.get_benchmark_info()
                if i == 0:
                    ttft_s = info.time_to_first_token_in_second
                    init_s = info.init_time_in_second or executor_s
                stats.append(
                    (
                        info.last_prefill_token_count,
                        info.last_prefill_tokens_per_second,
                        info.last_decode_token_count,
                        info.last_decode_tokens_per_second,
                    )
                )
    if memory:
        memory.stop()
    if failed:
        log("E", failed)
    if flags.get("benchmark") == "true":
        out = ["BenchmarkInfo:", "  Init Phases (2):",
               f"    - Executor initialization: {init_s * 1000:.4f} ms",
               f"    - Init Total: {max(executor_s, init_s) * 1000:.4f} ms",
               f"  Time to first token: {ttft_s:.2f} s"]  # fmt: skip
        if not stats:
            out.append("  No prefill turns recorded.")
        else:
            for kind, col in (("Prefill", 0), ("Decode", 2)):
                out.append(f"  {kind} Turns (Total {len(stats)} turns):")
                for n, row in enumerate(stats, 1):
                    tokens, tps = row[col], row[col + 1]
                    dur = tokens / tps if tps else 0.0
                    out.append(
                        f"    {kind} Turn {n}: Processed {tokens} tokens in {fmt_duration(dur)} duration."
                    )
                    out.append(f"      {kind} Speed: {tps:.2f} tokens/sec.")
        sys.stdout.write("\n".join(out) + "\n")
    if memory:
        sys.stdout.write(f"Peak system ram usage: {memory.rss_kb / 1024:.2f} MB.\n")
        sys.stdout.write(f"Peak private footprint: {memory.private_kb / 1024:.2f} MB.\n")
    sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
