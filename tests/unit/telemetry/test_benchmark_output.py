"""The upstream binary's output -> figures, failure kinds and the runtime's own words.

Fixtures: tests/unit/fixtures/litert_lm/README.md says where every line comes from. Citations are
`repo/path:line @ pin` with the pins of orchestrator/telemetry/benchmark_output.py:
LM = google-ai-edge/LiteRT-LM @ e533a5ac0da0, RT = google-ai-edge/LiteRT @ b0f6c12088df,
ABSL = abseil/abseil-cpp @ 20260526.0. "seen 0.18.1" = printed by the litert-lm-api 0.18.1
runtime on this host (the host_0.18.1_* fixtures are those captures, verbatim).
"""

from pathlib import Path

import pytest

from orchestrator.telemetry.benchmark_output import (
    FAILURE_PATTERNS,
    FALLBACK_PATTERNS,
    duration_ms,
    parse_benchmark_output,
)

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "litert_lm"
P = "I0000 00:00:1796038000.104321   14823 "  # ABSL absl/log/internal/log_format.cc:103 prefix


def parse(name: str):
    return parse_benchmark_output((FIX / f"{name}.stdout").read_text(), (FIX / f"{name}.stderr").read_text())


@pytest.mark.parametrize(
    "text,ms",
    [
        # ABSL absl/time/duration.cc:731-765 FormatDuration
        ("819.9514ms", 819.9514),
        ("8.7038005s", 8703.8005),
        ("11.2us", 0.0112),
        ("250ns", 0.00025),
        ("1m2.5s", 62500.0),
        ("2h0m1s", 7201000.0),
        ("0", 0.0),
        # older captures (shared/notes/litert-lm.md)
        ("0.92 s", 920.0),
    ],
)
def test_duration_units(text, ms):
    assert duration_ms(text) == pytest.approx(ms)


# ------------------------------------------------------------------ successful runs
def test_success_reads_the_block_from_stderr_without_prefix():
    # LM runtime/engine/litert_lm_lib.cc:422 NoPrefix lines laid out by io_types.cc:372-467
    r = parse("success_cpu")
    assert r.answer == "The capital of France is Paris."
    assert r.has_benchmark and r.failure == "" and r.warnings == () and r.detail == ""
    assert r.backend == "cpu" and r.backend_note == ""  # litert_lm_lib.cc:499 "Choose backend: "
    # io_types.cc:376 counts the skipped "Init Session" phase (:387-399): 7 counted, 5 + total listed
    assert [name for name, _ in r.init_phases_ms] == [
        "Init Conversation",
        "Init Executor",
        "Init LLM metadata",
        "Init Model assets",
        "Init Tokenizer",
    ]
    assert r.init_total_ms == pytest.approx(2417.8)  # io_types.h:228 "Init Total"
    assert r.ttft_ms == 920.0  # io_types.cc:347-357: 8704 ms / 128 + 852 ms
    assert r.prefill[0].tokens == 25 and r.prefill[0].tps == pytest.approx(29.34)
    assert r.prefill[0].duration_ms == pytest.approx(852.0)
    assert r.decode[0].tokens == 128 and r.decode[0].duration_ms == pytest.approx(8704.0)
    assert r.decode[0].tps == pytest.approx(14.71)
    assert r.mark_durations_ms == ()
    # litert_lm_lib.cc:468 / :471 `<< peak << "MB."`
    assert r.peak_ram_mb == 1834.25 and r.peak_private_mb == 1902.5
    assert r.infer_ms == pytest.approx(852.0 + 8704.0)


def test_image_sample_has_mark_durations_and_a_ttft_finer_than_printed():
    r = parse("success_image")
    assert r.answer == "A red bicycle leaning against a brick wall."
    assert r.mark_durations_ms == (("vision_executor", pytest.approx(512.2513)),)  # io_types.cc:453-458
    assert r.ttft_ms == pytest.approx(690.3 / 11 + 1100.2)  # io_types.cc:347-357, printed "1.16 s"
    assert "Time to first token: 1.16 s" in (FIX / "success_image.stderr").read_text()


def test_multi_turn_strips_upstreams_prompt_and_sums_tokens_over_turns():
    # LM runtime/engine/litert_lm_lib.cc:259 prompt before each turn and once more at the end
    r = parse("multi_turn")
    assert r.answer.splitlines() == ["My name is Ada, nice to meet you.", "You told me your name is Sam."]
    assert [t.turn for t in r.prefill] == [1, 2]
    assert r.prefill_tokens == 32 and r.decode_tokens == 19
    assert r.decode[1].duration_ms == pytest.approx(0.601)  # "601us"
    assert r.decode[1].tps == pytest.approx(14975.04)


def test_num_iterations_reads_the_last_of_the_full_blocks():
    # LM runtime/engine/litert_lm_lib.cc:821-917: conversation, block and memory lines per iteration
    r = parse("num_iterations")
    assert r.answer == "Paris."
    assert r.iterations == 3
    assert r.prefill[0].duration_ms == pytest.approx(190.0) and r.decode[0].duration_ms == pytest.approx(
        195.0
    )
    assert r.peak_ram_mb == 1502.0  # the last iteration's


def test_nothing_recorded_is_no_benchmark_without_ttft():
    # io_types.cc:413 "No prefill turns recorded." and :347-357 TTFT 0.00 s
    r = parse("no_prefill")
    assert r.failure == "no_benchmark" and not r.has_benchmark
    assert r.ttft_ms is None and r.answer == ""
    assert r.init_total_ms == pytest.approx(924.5)


def test_gpu_sampler_fallback_is_an_ok_row_with_a_note():
    # LM runtime/components/sampler_factory.cc:764-768 (0.18.1 wording in the fixture): only the
    # sampler falls back; the model ran on the GPU.
    r = parse("gpu_sampler_fallback")
    assert r.has_benchmark and r.failure == ""
    assert r.backend == "gpu" and r.warnings == ("gpu_sampler_cpu_fallback",)
    assert "sampling fell back to CPU" in r.backend_note and "main model on GPU" in r.backend_note


def test_npu_without_an_npu_section_ran_on_cpu_and_is_a_fallback_not_an_npu_row():
    # LM llm_litert_compiled_model_executor_factory.cc:215-217, RT compiled_model.cc:1244-1246 +
    # compiler_plugin.cc:1018: the answer is real, but it was computed on the CPU
    r = parse("npu_generic_path")
    assert r.has_benchmark and r.failure == "backend_fallback"
    assert r.backend == "cpu" and r.backend_requested == "npu"
    assert "TF_LITE_AUX is not packaged" in r.detail
    assert r.warnings == ("npu_generic_path", "npu_no_compiler_plugin")
    assert "ran on CPU" in r.backend_note


# ------------------------------------------------------------------ failures: the runtime's words
def test_context_overflow_puts_the_runtimes_error_in_detail():
    # LM runtime/core/tasks.cc:468-471 via litert_lm_advanced_main.cc:377 (exit code 3)
    r = parse("context_overflow")
    assert r.failure == "context_overflow" and not r.has_benchmark
    assert r.detail == (
        "Failed to run litert_lm: INVALID_ARGUMENT: Input token ids are too long. "
        "Exceeding the maximum number of tokens allowed: 1200 >= 1024"
    )
    assert r.exit_status == "INVALID_ARGUMENT"


def test_gpu_without_accelerator_is_an_error_not_a_fallback():
    # RT gpu_registry.cc:130-131, then compiled_model.cc:1053-1058 for LM's kGpu-only compilation
    r = parse("gpu_no_accelerator")
    assert r.failure == "gpu_unavailable" and not r.has_benchmark
    assert r.backend == "" and r.backend_requested == "gpu"  # nothing ran: no backend is claimed
    assert r.detail.startswith("Failed to run litert_lm: INTERNAL: ERROR: [")
    assert r.detail.splitlines()[-1] == (
        "└ Some ops are not accelerated. Add kLiteRtHwAcceleratorCpu to the compilation accelerator "
        "set to allow using the CPU to run those."
    )
    assert "does not fall back" in r.backend_note


def test_gpu_failure_is_found_even_when_the_nested_message_is_lost():
    # A build whose status chain drops the innermost text still says which backend was chosen
    # (litert_lm_lib.cc:499) and that no GPU accelerator registered (gpu_registry.cc:130-131).
    err = (
        (FIX / "gpu_no_accelerator.stderr")
        .read_text()
        .replace(
            "└ Some ops are not accelerated. Add kLiteRtHwAcceleratorCpu to the compilation accelerator set "
            "to allow using the CPU to run those.\n",
            "",
        )
    )
    assert "Some ops" not in err
    assert parse_benchmark_output("", err).failure == "gpu_unavailable"


def test_the_gpu_registry_warning_alone_does_not_fail_a_cpu_run():
    # every run tries every accelerator: "GPU accelerator could not be loaded and registered."
    r = parse("success_cpu")
    assert "GPU accelerator could not be loaded" in (FIX / "success_cpu.stderr").read_text()
    assert r.failure == "" and r.warnings == ()


def test_npu_dispatch_missing():
    # RT dispatch_delegate.cc:129-131 / :115-116, litert_dispatch.cc:119-120
    r = parse("npu_missing")
    assert r.failure == "npu_dispatch_missing" and r.backend_requested == "npu" and r.backend == ""
    assert r.exit_status == "INTERNAL"
    assert r.detail.startswith(  # the verdict, then the dispatch layer's own line that names the cause
        "Failed to run litert_lm: INTERNAL: ERROR: [external/litert/litert/cc/litert_compiled_model.h:1894]\n"
        "└ Failed to modify graph with delegate\n"
    )
    assert "No dispatch library found in /data/local/tmp" in r.detail


@pytest.mark.parametrize(
    "name,kind,words",
    [
        # AOSP bionic linker/linker_main.cpp __linker_cannot_link + linker.cpp "not found: needed by"
        (
            "link_error",
            "link_error",
            'CANNOT LINK EXECUTABLE "/data/local/tmp/edgefarm/bin/litert_lm_advanced_main"',
        ),
        # RT tflite/delegates/gpu/cl/cl_command_queue.cc:170-171 + util.cc:84
        ("opencl_error", "opencl_error", "Failed to clFinish - Invalid command queue"),
        # RT tflite/delegates/gpu/cl/cl_command_queue.cc:79-80 + util.cc:43
        ("oom", "oom", "Out of host memory"),
        # ABSL log_format.cc:103 severity F; LM litert_lm_advanced_main.cc:108
        ("crash_fatal", "crash", "Only one of --input_prompt and --input_prompt_file can be specified."),
    ],
)
def test_failures_without_benchmark_are_classified_with_the_runtimes_words(name, kind, words):
    r = parse(name)
    assert not r.has_benchmark and r.ttft_ms is None and r.prefill == ()
    assert r.failure == kind
    assert words in r.detail


# ------------------------------------------------------------------ real 0.18.1 captures (C API)
@pytest.mark.parametrize(
    "name,kind,words",
    [
        # LM runtime/core/tasks.cc:468-471 (c/conversation.cc:553 "Failed to send message: ")
        ("host_0.18.1_context_overflow", "context_overflow", "Input token ids are too long. Exceeding"),
        # LM support/util/memory_mapped_file_posix.cc:115-119 in the log; the final error is
        # "tf_lite_prefill_decode not found in the model." (model_resources_litert_lm.cc:126)
        ("host_0.18.1_truncated_model", "truncated_model", "tf_lite_prefill_decode not found in the model."),
        # RT litert/cc/internal/scoped_file_posix.h:41
        (
            "host_0.18.1_model_not_found",
            "model_load",
            "open() failed: /tmp/gpuprobe/nope.litertlm: No such file",
        ),
        # LM schema/core/litertlm_read.cc:79
        ("host_0.18.1_bad_magic", "model_load", "Invalid magic number or failed to read: garbageg"),
        # RT ml_drift_delegate/delegate/delegate_webgpu.cc:285-286: no GPU adapter, no engine
        ("host_0.18.1_gpu_no_adapter", "gpu_unavailable", "Failed to create engine: UNKNOWN: ERROR: ["),
    ],
)
def test_real_runtime_captures_are_classified(name, kind, words):
    r = parse(name)
    assert r.failure == kind
    assert words in r.detail


def test_real_runtime_npu_request_on_a_cpu_model_is_a_fallback_row():
    name = "host_0.18.1_npu_generic_path"
    r = parse_benchmark_output((FIX / f"{name}.stdout").read_text(), (FIX / f"{name}.stderr").read_text(), "npu")
    assert r.warnings == ("npu_generic_path", "npu_no_compiler_plugin")
    assert r.answer == "a tiny picture"


# ------------------------------------------------------------------ every pattern, on upstream's strings
UPSTREAM = {
    # kind: strings as upstream prints them (see each pattern's citation in benchmark_output.py)
    "link_error": ['CANNOT LINK EXECUTABLE "/x/litert_lm_advanced_main": library "libfoo.so" not found'],
    "oom": [
        "terminate called after throwing an instance of 'std::bad_alloc'",
        "Failed to run litert_lm: RESOURCE_EXHAUSTED: ERROR: [x.cc:1]",
        "Failed to clEnqueueNDRangeKernel - Memory object allocation failure",
        "Failed to clFinish - Out of host memory",
    ],
    "crash": [
        "F0000 00:00:1796038000.104321   14823 litert_lm_advanced_main.cc:108] Only one of",
        "Segmentation fault",
        "signal 11 (SIGSEGV), code 2 (SEGV_ACCERR), fault addr 0x00000072231c1000",
        "libc++abi: terminating due to uncaught exception of type",
    ],
    "truncated_model": [
        "INTERNAL: false: Length (350120) and offset (65536) are too large for file size (200000).",
    ],
    "context_overflow": [
        "Input token ids are too long. Exceeding the maximum number of tokens allowed: 9 >= 8"
    ],
    "npu_dispatch_missing": [
        "ERROR: [dispatch_delegate.cc:131] Failed to create a dispatch delegate kernel: No usable Dispatch runtime found",
        "ERROR: [dispatch_delegate.cc:116] Failed to initialize Dispatch API: ERROR: [x.cc:175]",
        "ERROR: [litert_dispatch.cc:120] No dispatch library found in /data/local/tmp",
    ],
    "gpu_unavailable": [
        "└ Some ops are not accelerated. Add kLiteRtHwAcceleratorCpu to the compilation accelerator set",
        "ERROR: [gpu_environment.cc:205] Failed to load OpenCL for LiteRT.",
        'Can not open OpenCL library on this device - dlopen failed: library "libOpenCL.so" not found',
        "Failed to open OpenCL library: UNKNOWN: Can not find OpenCL library on this device",
        "Can not find OpenCL library on this device",
        "ERROR: [delegate_webgpu.cc:359] Failed to initialize WebGPU environment: INTERNAL: No adapters found",
    ],
    "opencl_error": ["Failed to clFinish - Invalid command queue"],
    # real captures (tests/unit/fixtures/real/README.md): upstream's NPU dispatch / TFLite / absl words
    "npu_context_error": [
        "ERROR: [dispatch_api.cc:225] Failed to create context from context binary: Failed to restore model",
        "ERROR: [qnn_manager.cc:494] Failed to create QNN context: 1002",
    ],
    "op_unsupported": ["Node number 68 (STABLEHLO_COMPOSITE) failed to prepare."],
    "aborted": ["RuntimeError: ABORTED: ABORTED: The timeout was reached while reading back data."],
    "model_load": [
        "NOT_FOUND: open() failed: /m.litertlm: No such file or directory",
        "INVALID_ARGUMENT: Invalid magic number or failed to read: garbageg",
        "tf_lite_prefill_decode not found in the model.",
        "W0000 00:00:1796038000.104321   14823 litert_lm_loader.cc:299] Failed to map section: INTERNAL: x",
    ],
}


def test_every_failure_pattern_has_upstream_strings():
    assert set(UPSTREAM) == {kind for kind, _ in FAILURE_PATTERNS}


@pytest.mark.parametrize("kind,text", [(k, t) for k, texts in UPSTREAM.items() for t in texts])
def test_each_pattern_matches_upstreams_string(kind, text):
    pattern = dict(FAILURE_PATTERNS)[kind]
    assert pattern.search(text)
    # and the run that prints it (with no benchmark) is that failure, with those words in detail
    r = parse_benchmark_output("", "E0000 00:00:1796038000.104321   14823 x.cc:1] " + text.lstrip("└ "))
    assert r.failure == kind or kind == "crash"  # `F` must START the line: tested on its own below


def test_a_fatal_line_is_a_crash():
    r = parse_benchmark_output("", UPSTREAM["crash"][0] + " --input_prompt and --input_prompt_file")
    assert r.failure == "crash" and r.detail.startswith("Only one of")


@pytest.mark.parametrize(
    "kind,text",
    [
        (
            "gpu_sampler_cpu_fallback",
            # the 0.18.1 liblitert-lm.so wording; LM sampler_factory.cc:765 at the pin differs after "sampling."
            (
                "GPU sampler unavailable. Falling back to CPU sampling. To use GPU sampling, please make sure "
                "libLiteRtTopKWebGpuSampler.so or libLiteRtTopKOpenClSampler.so is available at LD_LIBRARY_PATH"
            ),
        ),
        (
            "npu_generic_path",
            (
                "NPU backend requested, but TF_LITE_AUX is not packaged in the model. Using the generic LiteRT "
                "compiler-plugin path."
            ),
        ),
        (
            "npu_no_compiler_plugin",
            "WARNING: [compiled_model.cc:1393] Failed to apply compiler plugins: No compiler plugin found",
        ),
    ],
)
def test_each_fallback_pattern_matches_upstreams_string(kind, text):
    assert {k: p for k, p, _ in FALLBACK_PATTERNS}[kind].search(text)


# ------------------------------------------------------------------ older builds (shared/notes/litert-lm.md)
LEGACY = """\
I0000 00:00:1733912345.123456   12345 litert_lm_main.cc:221] BenchmarkInfo:
  Init Phases (3):
    - Executor initialization: 819.9514ms
    - Tokenizer initialization: 31.2ms
    - Model assets loading: 1.2035s
  Total init time: 2054.6514 ms
  Time to first token: 0.92 s
  Prefill Turns (Total: 1):
    Prefill Turn 1: Processed 25 tokens in 204.6ms duration.
      Prefill Speed: 122.19 tokens/sec.
  Decode Turns (Total: 1):
    Decode Turn 1: Processed 128 tokens in 8.7038005s duration.
      Decode Speed: 14.71 tokens/sec.
  TextToTokenIds Turns (Total 1 turns):
    TextToTokenIds Turn 1: Processed 25 tokens in 11.2us duration.
"""


def test_older_builds_variations_are_still_read():
    # glog prefix on the header, `(Total: 1)`, a `Total init time` line, older phase names, a
    # measured TTFT that is not the io_types.cc formula (kept), the block on stdout after the answer
    r = parse_benchmark_output("Paris.\n" + LEGACY, "")
    assert r.answer == "Paris."
    assert r.has_benchmark and r.failure == ""
    assert [n for n, _ in r.init_phases_ms] == [
        "Executor initialization",
        "Tokenizer initialization",
        "Model assets loading",
    ]
    assert r.init_total_ms == pytest.approx(2054.6514)
    assert r.ttft_ms == pytest.approx(920.0)
    assert r.decode[0].tokens == 128 and r.decode[0].tps == pytest.approx(14.71)
    assert r.prefill == (r.prefill[0],)  # the TextToTokenIds turn is not a prefill turn


def test_older_num_iterations_headerless_blocks_then_an_aggregated_one():
    body = "  Time to first token: {t} s\n  Prefill Turns (Total 1 turns):\n    Prefill Turn 1: Processed 25 tokens in {p}ms duration.\n      Prefill Speed: 1.00 tokens/sec.\n"
    out = "".join(body.format(t=t, p=p) for t, p in ((0.9, 200), (0.8, 180), (0.85, 190)))
    out += "BenchmarkInfo (median of 3 iterations):\n" + body.format(t=0.85, p=190)
    r = parse_benchmark_output(out, "")
    assert r.iterations == 3 and r.ttft_ms == pytest.approx(850.0) and r.prefill[0].duration_ms == 190.0


def test_empty_output_is_no_benchmark():
    r = parse_benchmark_output("", "")
    assert r.failure == "no_benchmark" and r.answer == "" and r.detail == ""


def test_log_sink_file_memory_format():
    # LM runtime/engine/litert_lm_lib.cc:473-476 with --log_sink_file: "%.2f MB"
    r = parse_benchmark_output("", P + "litert_lm_lib.cc:473] Peak system ram usage: 1234.50 MB")
    assert r.peak_ram_mb == 1234.5


def test_no_block_but_an_error_line_gives_that_line_as_detail():
    # LM runtime/engine/litert_lm_lib.cc:671-672: --multi_turns with --async prints no block
    err = P.replace("I0000", "E0000") + (
        "litert_lm_lib.cc:671] Benchmark with multi-turns and async do not show results, use sync mode instead."
    )
    r = parse_benchmark_output("", err)
    assert r.failure == "no_benchmark" and r.exit_status == ""
    assert r.detail == "Benchmark with multi-turns and async do not show results, use sync mode instead."
