"""The native runner's result lines -> rows (pure)."""

import json
from pathlib import PurePosixPath

from android_runner.contract import JobItem
from orchestrator.runners.android_native import line_row, parse_line, render_job, with_snapshots
from orchestrator.runners.base import RunOptions

OPTS = RunOptions(run_id="r", backend="cpu", threads=2)


def test_ok_line_becomes_a_row_with_mb_peaks_and_summed_tokens():
    line = {"n": 3, "status": "ok", "error": "", "response": json.dumps({"role": "assistant", "content": [{"type": "text", "text": "Tokyo"}]}),
            "init_ms": 18.8, "ttft_ms": 6.7, "infer_ms": 15.2, "wall_ms": 30.5, "peak_rss_kb": 75036, "peak_hwm_kb": 76000,
            "peak_anon_kb": 17552, "peak_file_kb": 57484, "peak_swap_kb": 1024,
            "turns": [{"prefill_tokens": 45, "prefill_tps": 7017.2, "decode_tokens": 6, "decode_tps": 3713.7, "wall_ms": 10.0},
                      {"prefill_tokens": 5, "prefill_tps": 900.0, "decode_tokens": 4, "decode_tps": 3000.0, "wall_ms": 5.2}]}  # fmt: skip
    r = with_snapshots(line_row(line, "TXT-1", OPTS), line, OPTS, {})
    assert r.status == "ok" and r.output == "Tokyo" and r.exit_code == 0
    assert r.prefill_tokens == 50 and r.decode_tokens == 10 and r.decode_tps == 3000.0 and len(r.turns) == 2
    assert r.peak_rss_mb == round((75036 + 1024) / 1024, 2)  # max(VmHWM, VmRSS + VmSwap)
    assert r.peak_file_mb == round(57484 / 1024, 2) and r.threads == 2 and r.thermal_before is None


def test_error_and_timeout_lines_keep_the_runtimes_words():
    err = line_row(
        {
            "n": 1,
            "status": "error",
            "error": "the runtime refused the message (status 3): Input token ids are too long",
        },
        "a",
        OPTS,
    )
    assert err.status == "error" and "Input token ids are too long" in err.error
    t = line_row({"n": 1, "status": "timeout", "exit_code": 124, "error": "no answer within 5 s"}, "a", OPTS)
    assert t.status == "timeout" and t.exit_code == 124


def test_a_runner_death_recorded_by_the_driver_is_crash_killed_or_oom():
    killed = line_row({"n": 2, "status": "died", "exit_code": 137}, "a", OPTS, log_tail="F0000 boom")
    assert (
        killed.status == "killed"
        and killed.signal == 9
        and killed.exit_code is None
        and "boom" in killed.error
    )
    lmk = "lowmemorykiller: Kill 'x' (1), uid 1, oom_score_adj 0 to free 1kB rss, 0kB swap"
    oom = line_row({"n": 2, "status": "died", "exit_code": 137}, "a", OPTS, log_tail=lmk)
    assert oom.status == "oom" and "memory pressure recorded" in oom.error
    crash = line_row({"n": 2, "status": "died", "exit_code": 134}, "a", OPTS)
    assert crash.status == "crash" and crash.signal == 6


def test_parse_line_ignores_torn_and_foreign_lines():
    assert parse_line('{"n":4,"status":"ok"}') == {"n": 4, "status": "ok"}
    assert parse_line('{"n":4,"status":"o') is None and parse_line("EDGEFARM NOTE x") is None
    assert parse_line('{"n":"4"}') is None


def test_a_row_streams_from_its_line_and_gets_the_snapshots_and_the_log_at_the_end():
    """The driver builds a line's row once (line_row) and adds the hook's files and the runner log at
    the end (with_snapshots): the row in the end has both."""
    from dataclasses import replace
    from pathlib import Path

    from orchestrator.runners.android_native import backend_lines

    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    reply = json.dumps({"role": "assistant", "content": [{"type": "text", "text": "Tokyo"}]})
    line = {"n": 1, "status": "ok", "response": reply, "wall_ms": 2000.0, "turns": [{"decode_tokens": 4}]}
    battery = (fixtures / "android" / "battery_galaxy_s24.txt").read_text()  # a current reading: energy
    files = {"battery_before": battery, "battery_after": battery, "cooldown_ms": "1500"}
    log = backend_lines((fixtures / "real" / "lm1448_emulator_gpu_head.log").read_text("utf-8"))
    gpu = replace(OPTS, backend="gpu")
    row = line_row(line, "S", gpu)
    assert row.max_output_tokens is None  # the job's cap, when the driver passes it (issue 36):
    assert line_row(line, "S", gpu, max_output_tokens=64).max_output_tokens == 64
    streamed = with_snapshots(row, line, gpu, {})
    assert streamed.status == "ok" and streamed.backend == "gpu" and streamed.energy_j is None
    end = with_snapshots(row, line, gpu, files, log)
    assert end.status == "error" and end.backend == "cpu" and "GPU accelerator could not be" in end.error
    assert end.energy_j is not None and end.cooldown_s == 1.5 and end.output == "Tokyo"


def test_a_bench_line_is_its_timed_turns_counts_with_its_cells_backend_and_threads():
    line = {"n": 1, "status": "ok", "error": "", "response": None, "init_ms": 10.0, "engine_load": 2,
            "backend": "cpu", "threads": 4, "ttft_ms": 3.0,
            "turns": [{"prefill_tokens": 64, "prefill_tps": 900.0, "wall_ms": 70.0},
                      {"prefill_tokens": 16, "prefill_tps": 800.0, "decode_tokens": 8, "decode_tps": 90.0}]}  # fmt: skip
    r = line_row(line, "p16-n8-d64-cpu-t4", RunOptions(run_id="r", backend="gpu"))
    assert (r.prefill_tokens, r.prefill_tps, r.decode_tokens, r.decode_tps) == (16, 800.0, 8, 90.0)
    assert (r.backend, r.backend_requested, r.threads, r.engine_load) == ("cpu", "cpu", 4, 2)
    assert r.ttft_phases_ms is None  # the first turn is the depth fill, not the prompt
    assert (r.threads_ran, r.threads_from) == (4, "asked")  # the runner did not count: the rule
    r = line_row({**line, "threads": 0, "threads_ran": 3}, "c", RunOptions(run_id="r"))
    assert (r.threads, r.threads_ran, r.threads_from) == (None, 3, "counted")  # the runner's count
    r = line_row({**line, "threads": 0}, "c", RunOptions(run_id="r"))
    assert (r.threads_ran, r.threads_from) == (4, "runtime default")  # LiteRT-LM's CpuConfig default
    r = line_row({**line, "backend": "gpu", "threads_ran": 3}, "c", RunOptions(run_id="r"))
    assert (r.threads_ran, r.threads_from) == (None, "")  # no CPU engine, no thread count
    bench = render_job([(1, JobItem(id="c", turns=(), bench={"n_prompt": 16, "n_gen": 8, "n_depth": 64,
                                                            "backend": "cpu", "threads": None}))], PurePosixPath("/j"))  # fmt: skip
    assert bench == b"EFJOB 1\nS 1\nB 16 8 64 0 cpu\nE\n"


def test_a_bench_job_file_groups_the_cells_by_engine_key_so_each_engine_loads_once():
    def cell(i, n_gen):
        return JobItem(id=f"c{i}", turns=(), bench={"n_prompt": 8, "n_gen": n_gen, "n_depth": 0, "backend": "cpu",
                                                    "threads": None})  # fmt: skip

    job = render_job(
        [(1, cell(1, 8)), (2, cell(2, 12)), (3, cell(3, 8)), (4, cell(4, 12))], PurePosixPath("/j")
    )
    assert [ln for ln in job.decode().splitlines() if ln.startswith("S ")] == ["S 1", "S 3", "S 2", "S 4"]
