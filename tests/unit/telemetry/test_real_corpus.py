"""Every real capture in tests/unit/fixtures/real/ through the functions the product calls.

The captures are other people's outputs pasted in public issue threads and docs, stored verbatim
(tests/unit/fixtures/real/README.md cites each). A runtime log goes through the upstream runner's
`build_result` (the phone's row) and `parse_benchmark_output` (the kind and the runtime's words);
the telemetry goes through the parsers `devices/adb.py`, `devices/ssh_info.py` and the runners use.
What every row must satisfy: the right status and kind, the runtime's own words on the row, never
an empty detail, never a backend claimed that did not run.

The exit code of each row is the one the driver's shell would report for what the capture shows
(`Segmentation fault` -> 139, `Aborted` -> 134, `Killed` -> 137, a printed error -> 1, absl's
INTERNAL -> 13, INVALID_ARGUMENT -> 3): the capture's TEXT is never changed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from android_runner.backend import BACKEND_UNAVAILABLE_KINDS, engine_failure
from android_runner.memory import parse_status
from android_runner.status import memory_pressure
from orchestrator.devices.ssh_info import parse_throttled, parse_vcgencmd_temp
from orchestrator.runners.android_upstream import Rendered, build_result
from orchestrator.runners.base import RunOptions
from orchestrator.telemetry.android import (
    parse_battery,
    parse_getprop,
    parse_thermal,
    soc_from_props,
)
from orchestrator.telemetry.benchmark_output import parse_benchmark_output
from orchestrator.telemetry.cli_benchmark import parse_cli_benchmark

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
FIX = REAL.parent / "litert_lm"


def text(name: str) -> str:
    return (REAL / name).read_text(encoding="utf-8")


# fixture, backend asked, exit code, status, failure kind, the runtime's words the row must keep
LOGS = [
    # GPU unavailable / OpenCL library missing
    ("lm2241_pixel5_opencl_not_found.log", "gpu", 1, "error", "gpu_unavailable",
     "Can not find OpenCL library on this device"),
    ("lm1448_emulator_gpu_head.log", "gpu", 1, "error", "gpu_unavailable",
     "GPU accelerator could not be loaded and registered."),
    ("rn1_ios_gpu_not_registered.log", "gpu", 1, "error", "gpu_unavailable",
     "GPU accelerator could not be loaded and registered."),
    ("rt2395_gpu_symbol_missing.log", "gpu", 1, "error", "gpu_unavailable",
     "Could not load symbol LiteRtRegisterAcceleratorGpuOpenCl"),
    ("rt9250_d8300_gpu_input_tensor.log", "gpu", 134, "crash", "gpu_unavailable",
     "GPU accelerator could not be loaded and registered."),
    ("lm2461_gemma12b_gpu_prepare.log", "gpu", 1, "error", "op_unsupported",
     "Node number 0 (BATCH_MATMUL) failed to prepare."),
    # NPU / dispatch
    ("lm1466_dispatch_api_logcat.log", "npu", 1, "error", "npu_dispatch_missing",
     "Failed to initialize Dispatch API"),
    ("rt5594_sm8750_dispatch_truncated.log", "npu", 1, "error", "npu_dispatch_missing",
     "Failed to create a dispatch delegate kernel: No usable Dispatch runtime foun"),
    ("rt7787_pixel10_no_dispatch_library.log", "npu", 134, "crash", "npu_dispatch_missing",
     "No dispatch library found in /data/app/<...>/lib/arm64"),
    ("lm3109_d8300_dispatch.log", "npu", 1, "error", "npu_dispatch_missing", "Failed to initialize Dispatch API"),
    ("lm1437_mt6993_context_binary.log", "npu", 1, "error", "npu_context_error",
     "Failed to create context from context binary: Failed to restore model from compiled network"),
    ("rt5141_qnn_context_binary.log", "npu", 1, "error", "npu_context_error", "Failed to create QNN context: 1002"),
    ("lm1979_sm8550_npu_head.log", "npu", 1, "error", "no_benchmark",
     "Loading shared library: /data/local/tmp/gemma/libLiteRtDispatch_Qualcomm.so"),
    ("lm1396_mediatek_no_turns.log", "npu", 0, "error", "no_benchmark", "No prefill turns recorded."),
    # SIGSEGV / abort
    ("lm1857_windows_gpu_segfault.log", "gpu", 139, "crash", "crash", "Segmentation fault"),
    ("lm2977_tombstone_sigsegv.log", "cpu", 139, "crash", "crash",
     "signal 11 (SIGSEGV), code 2 (SEGV_ACCERR), fault addr 0x00000072231c1000"),
    ("rt9250_d8300_npu_abort.log", "npu", 134, "crash", "crash",
     "N5armnn29ClRuntimeUnavailableExceptionE: Could not initialize the CL runtime."),
    ("lm2180_a770_registry.log", "gpu", 139, "crash", "no_benchmark", "CPU accelerator registered."),
    # ABORTED / timeout (the GPU read-back), after an OpenCL dlopen miss
    ("lm2757_serve_aborted_timeout.log", "gpu", 1, "error", "aborted",
     "ABORTED: ABORTED: The timeout was reached while reading back data."),
    ("lm2338_jetson_opencl_dlopen_aborted.log", "gpu", 1, "error", "aborted",
     "RuntimeError: ABORTED: ABORTED: The timeout was reached while reading back data."),
    # input too long, truncated model
    ("haos_addon_context_overflow.log", "cpu", 3, "error", "context_overflow",
     "Input token ids are too long. 13463 >= 8192"),
    ("lm1858_pixel9_length_offset.log", "cpu", 13, "error", "truncated_model",
     "file_size >= length + offset (1310720 vs. 4721781) Length and offset too large."),
    # a CPU run's head: the GPU/NPU registry warnings do not fail it
    ("lm1377_xiaomi15_cpu_head.log", "cpu", 1, "error", "no_benchmark", "GPU accelerator could not"),
    # `litert-lm benchmark` without its results (pasted up to the header; a GPU driver's noise)
    ("lm2568_benchmark_cli_header.log", "cpu", 1, "error", "no_benchmark", "Max number of tokens       : 2048"),
    ("lm2180_benchmark_cli_a770_gpu.log", "gpu", 139, "crash", "no_benchmark", "name=dynamic pool"),
    # killed: the shell's word, no memory evidence in the log
    ("rknn249_killed.log", "cpu", 137, "killed", "no_benchmark", "Killed"),
]  # fmt: skip


@pytest.mark.parametrize("name,backend,rc,status,kind,words", LOGS, ids=[row[0] for row in LOGS])
def test_each_real_log_gives_the_right_row(name, backend, rc, status, kind, words):
    log = text(name)
    assert words in log  # the words are the capture's own
    bench = parse_benchmark_output("", log, backend)
    assert bench.failure == kind
    assert bench.detail.strip(), "a failure always carries the runtime's words"
    opts = RunOptions(run_id="r", backend=backend)
    row = build_result(
        Rendered(1, "S", 1, max_output_tokens=64), rc, 1000.0, {"stdout": "", "stderr": log}, opts
    )
    assert row.status == status
    assert words in row.error  # kept on the row, not only in a log file
    assert row.backend == ""  # nothing was answered: no backend is claimed
    assert row.backend_requested == backend and row.runner == "upstream" and row.max_output_tokens == 64


@pytest.mark.parametrize("name,backend,rc,status,kind,words", LOGS, ids=[row[0] for row in LOGS])
def test_the_python_runner_reads_the_same_log_the_same_way(name, backend, rc, status, kind, words):
    """The Python runner classifies its runtime's log at engine creation with the same classifier:
    a backend the device cannot give exits 69 (BackendUnavailable on the host), anything else 65."""
    got, detail = engine_failure(text(name), backend, "RuntimeError: Failed to create engine")
    assert got == ("" if kind == "no_benchmark" else kind)
    assert words in detail
    assert (got in BACKEND_UNAVAILABLE_KINDS) == (
        kind in ("gpu_unavailable", "npu_dispatch_missing", "npu_context_error")
    )


def test_a_severity_prefix_is_not_an_exit_status_and_an_unrelated_npu_line_is_not_the_detail():
    # the misread on main: `ERROR: ERROR: [...dispatch_accelerator.cc:137] Dispatch library directory
    # is not set.` (an NPU line every run prints) was the detail and "ERROR" the exit status
    bench = parse_benchmark_output("", text("lm1448_emulator_gpu_head.log"), "gpu")
    assert bench.exit_status == ""
    assert "Dispatch library directory" not in bench.detail
    assert bench.detail == "GPU accelerator could not be loaded and registered."


def test_the_same_gpu_head_before_a_cpu_benchmark_block_is_a_fallback_not_a_gpu_row():
    # lm1448's real head (GPU not registered, CPU registered) followed by a benchmark block (the
    # litert_lm fixture's, laid out by upstream's io_types.cc): the answer was computed on the CPU
    stderr = text("lm1448_emulator_gpu_head.log") + (FIX / "success_cpu.stderr").read_text()
    stderr = stderr.replace("Choose backend: cpu", "Choose backend: gpu")
    stdout = (FIX / "success_cpu.stdout").read_text()
    opts = RunOptions(run_id="r", backend="gpu")
    row = build_result(Rendered(1, "S", 1), 0, 1000.0, {"stdout": stdout, "stderr": stderr}, opts)
    assert row.status == "error" and row.backend == "cpu" and row.backend_requested == "gpu"
    assert (
        "backend_fallback" in row.error and "GPU accelerator could not be loaded and registered." in row.error
    )
    assert row.decode_tps == 14.71  # the figures are kept: they are real, of the CPU


def test_the_same_head_on_a_cpu_run_is_an_ok_cpu_row():
    stderr = text("lm1448_emulator_gpu_head.log") + (FIX / "success_cpu.stderr").read_text()
    opts = RunOptions(run_id="r", backend="cpu")
    row = build_result(Rendered(1, "S", 1), 0, 1000.0, {"stdout": "Paris.\n", "stderr": stderr}, opts)
    assert row.status == "ok" and row.backend == "cpu" and row.error == ""


def test_a_killed_runner_with_the_low_memory_killers_record_is_oom():
    log = text("rknn249_killed.log")
    opts = RunOptions(run_id="r", backend="cpu")
    files = {"stdout": "", "stderr": log, "logcat": text("lmkd_rk3588_rknn249.txt")}
    row = build_result(Rendered(1, "S", 1), 137, 1000.0, files, opts)
    assert row.status == "oom" and row.signal == 9
    assert "lowmemorykiller: Kill 'com.android.externalstorage' (10280)" in row.error


@pytest.mark.parametrize("name", ["lmkd_pixel8_executorch5582.txt", "lmkd_rk3588_rknn249.txt"])
def test_lmkd_records_are_memory_pressure(name):
    evidence = memory_pressure(log_text=text(name))
    assert evidence.startswith("memory pressure recorded:") and "Kill '" in evidence
    assert memory_pressure(log_text=text("rknn249_killed.log")) == ""  # `Killed` alone is no evidence


def test_litert_lm_benchmark_results_are_read():
    r = parse_cli_benchmark(text("book_benchmark_cli_results.log"))
    assert r is not None and r.has_results and r.backend == "cpu"
    assert (r.prefill_tokens, r.decode_tokens) == (256, 128)
    assert (r.prefill_tps, r.decode_tps, r.init_ms, r.ttft_ms) == (65.6, 24.8, 540.0, 3940.0)
    bench = parse_benchmark_output(text("book_benchmark_cli_results.log"), "", "cpu")
    assert bench.failure == "" and bench.backend == "cpu" and bench.ttft_ms == 3940.0
    assert bench.decode[0].tps == 24.8 and bench.prefill[0].tokens == 256 and bench.answer == ""


def test_litert_lm_benchmark_headers_without_results():
    head = parse_cli_benchmark(text("lm2568_benchmark_cli_header.log"))
    assert head is not None and not head.has_results
    assert (head.model, head.backend, head.max_num_tokens) == ("gemma-4-E4B-it.litertlm", "cpu", 2048)
    gpu = parse_cli_benchmark(text("lm2180_benchmark_cli_a770_gpu.log"))  # older order, driver noise between
    assert gpu is not None and gpu.backend == "gpu" and gpu.prefill_tokens == 512 and not gpu.has_results
    assert parse_cli_benchmark(text("lm1448_emulator_gpu_head.log")) is None


def test_a_headerless_iteration_block_on_stdout_is_not_the_answer():
    # lm1396's real block without its `BenchmarkInfo:` line, after an answer on stdout (older builds
    # printed --num_iterations blocks without a header)
    block = text("lm1396_mediatek_no_turns.log").replace("BenchmarkInfo:\n", "")
    r = parse_benchmark_output("Hello there.\n" + block, "")
    assert r.answer == "Hello there."


# ------------------------------------------------------------------ phone and board telemetry
def test_indented_getprop_is_read():
    props = parse_getprop(text("getprop_hammerhead_indented_flutter4009.txt"))
    assert len(props) == 27 and props["ro.build.date"] == "Tue Jan  6 22:40:00 UTC 2015"
    assert soc_from_props(props) == "msm8974"


def test_plain_and_grepped_getprop():
    props = parse_getprop(text("getprop_emulator_nativerun45.txt"))
    assert len(props) == 37 and props["gsm.sim.operator.alpha"] == "T-Mobile"
    assert soc_from_props(parse_getprop(text("getprop_mt6993_grep_lm1437.txt"))) == "MT6993"


@pytest.mark.parametrize(
    "name,level,temp,charging,plugged,volt",
    [
        ("battery_emulator_appium133.txt", 89.0, 0.0, True, "ac", 0),
        ("battery_samsung_full_mcloud150.txt", 100.0, 30.9, True, "usb", 4312),  # status 5 = full
        ("battery_dragon_syzkaller79.txt", 19.0, 27.5, True, "ac", 3764),  # the shell prompt line first
        ("battery_oneplus7_acc195.txt", 77.0, 29.4, False, "", 3985),  # a Uevent block follows
        ("battery_qcom_ac_skia.txt", 9.0, None, True, "ac", 4248),  # no temperature line
    ],
)
def test_dumpsys_battery(name, level, temp, charging, plugged, volt):
    b = parse_battery(text(name))
    assert (b.level_pct, b.temperature_c, b.charging, b.plugged, b.voltage_mv) == (
        level,
        temp,
        charging,
        plugged,
        volt,
    )


def test_tensor_virtual_usb_sensors_are_not_temperatures():
    t = parse_thermal(text("thermal_tensor_virtual_usb_skia.txt"))
    assert "VIRTUAL-USB-THROTTLING" not in t.temperatures_c and "VIRTUAL-USB-UI" not in t.temperatures_c
    assert 0.0 not in t.temperatures_c.values()  # soc (BCL percentage) and the idle USB states are out
    assert t.temperatures_c["VIRTUAL-SKIN"] == 24.83324 and t.temperatures_c["BIG"] == 26.000002
    assert t.max_temp_c == 27.000002  # LITTLE / MID, not 11900 (an OCP current)


def test_thermal_reads_the_live_section_not_the_cached_one():
    t = parse_thermal(text("thermal_qcom_cached_then_live_skia.txt"))
    assert t.max_temp_c == 44.1 and t.temperatures_c["cpu1-gold-usr"] == 33.5  # cached said 48.3
    assert t.status == 0 and t.hal_ready is True


@pytest.mark.parametrize(
    "name,rss,hwm,anon,file",
    [
        ("status_psutil1540.txt", 13484, 13484, 10264, 3220),
        ("status_chromium_overflow_htop877.txt", 609316, 632100, 516948, 91908),  # VmLib overflowed
        ("status_java_old_kernel_tsar41.txt", 142048, 147928, None, None),  # no RssAnon/RssFile
    ],
)
def test_proc_status_of_host_and_phone_processes(name, rss, hwm, anon, file):
    mb = parse_status(text(name))  # the one parser of it, the on-device sampler's (in MB)
    assert mb["VmRSS"] == rss / 1024.0 and mb["VmHWM"] == hwm / 1024.0
    assert mb.get("RssAnon") == (None if anon is None else anon / 1024.0)
    assert mb.get("RssFile") == (None if file is None else file / 1024.0)


@pytest.mark.parametrize(
    "name,temp,raw,now",
    [
        ("vcgencmd_pi3_duckietown358.txt", 62.3, "0x0", []),
        ("vcgencmd_pi3_firmware615.txt", 38.6, "0x50005", ["under-voltage", "throttled"]),
        ("vcgencmd_bashtop88.txt", 52.1, None, None),
    ],
)
def test_vcgencmd(name, temp, raw, now):
    out = text(name)
    assert parse_vcgencmd_temp(out) == temp
    t = parse_throttled(out)
    assert (t["raw"], t["now"]) == (raw, now) if raw else t is None


def test_every_capture_is_cited_in_the_readme():
    readme = text("README.md")
    names = sorted(p.name for p in REAL.iterdir() if p.name != "README.md")
    assert len(names) >= 30
    missing = [n for n in names if f"`{n}`" not in readme]
    assert not missing, missing
