"""Pure parts of the Android driver's host side: rendering, trace peaks, result building, preflight."""

from pathlib import Path, PurePosixPath

from android_runner.contract import JobItem, JobPart
from orchestrator.devices.types import DeviceInfo
from orchestrator.runners.android_driver import preflight
from orchestrator.runners.android_upstream import Rendered, build_result, parse_trace, render_job
from orchestrator.runners.base import RunOptions

FIX = Path(__file__).resolve().parents[1] / "fixtures"
JOB = PurePosixPath("/data/local/tmp/edgefarm/runs/r1/job")


def test_render_job_puts_prompts_in_files_with_absolute_media_tags(tmp_path):
    items = [
        JobItem(
            id="IMG 1; rm -rf /",
            turns=((JobPart("image", path="media/0000-1.png"), JobPart("text", "What?")),),
            system="Be brief.",
            max_output_tokens=32,
        ),
        JobItem(id="MT-1", turns=((JobPart("text", "Hi,\nI am Ada"),), (JobPart("text", "Who am I?"),))),
        JobItem(id="VID-1", turns=((JobPart("video", path="media/0002-1.mp4"),),)),
        JobItem(
            id="RX-1",
            turns=((JobPart("text", "Give a date"),),),
            constraint={"type": "regex", "pattern": r"\d{4}-\d{2}-\d{2}"},
        ),
    ]
    rendered = render_job(items, tmp_path, JOB)
    assert [r.n for r in rendered] == [1, 2, 3, 4] and rendered[2].skip_reason
    assert (tmp_path / "index.tsv").read_text() == "1\t0\n2\t1\n4\t0\n"
    assert (tmp_path / "samples/1/flags").read_text() == "--max_output_tokens=32\n"  # the sample's own cap
    assert (
        tmp_path / "samples/1/prompt.txt"
    ).read_text() == f"Be brief.\n\n[image:{JOB}/media/0000-1.png] What?"
    assert (tmp_path / "samples/2/turns.txt").read_text() == "Hi, I am Ada\nWho am I?\n"  # one line per turn
    # no constrained decoding: same as the host runner
    assert (tmp_path / "samples/4/flags").read_text() == "--max_output_tokens=128\n"
    assert "rm -rf" not in (tmp_path / "index.tsv").read_text()  # ids never reach the phone's command line


def test_trace_peaks_take_swap_into_account():
    trace = "100\t1000\t1200\t0\t400\t600\n200\t1500\t1500\t1024\t500\t1000\n300\t\t\t\t\t\n"
    p = parse_trace(trace)
    assert p.rss_mb == round(1500 / 1024, 2) and p.hwm_mb == round(1500 / 1024, 2)
    assert p.rss_plus_swap_mb == round(2524 / 1024, 2) and p.swap_mb == 1.0
    assert parse_trace("") == parse_trace("garbage")


def _files(name: str, **extra: str) -> dict[str, str]:
    d = FIX / "litert_lm"
    return {
        "stdout": (d / f"{name}.stdout").read_text(),
        "stderr": (d / f"{name}.stderr").read_text(),
        **extra,
    }


def test_build_result_ok_with_honest_peak_and_thermal():
    files = _files(
        "success_cpu",
        **{
            "trace.tsv": "1\t1900000\t1950000\t204800\t1\t1\n",
            "battery_before": (FIX / "android/battery_pixel8.txt").read_text(),
            "thermal_before": (FIX / "android/thermal_pixel8.txt").read_text(),
        },
    )
    r = build_result(Rendered(3, "TXT-9", 1), 0, 9100.0, files, RunOptions(run_id="r", threads=4))
    assert r.status == "ok" and r.output == "The capital of France is Paris." and r.exit_code == 0
    assert r.ttft_ms == 920.0 and r.prefill_tokens == 25 and r.decode_tps == 14.71
    assert r.peak_rss_mb == round((1900000 + 204800) / 1024, 2)  # beats the binary's 1834.25 MB
    assert r.thermal_before == {
        "battery_temp_c": 29.1,
        "battery_pct": 87.0,
        "thermal_status": 1,
        "max_temp_c": 36.75,
    }
    assert (
        r.thermal_after is None
        and r.trace == "samples/3/trace.tsv"
        and r.threads == 4
        and r.wall_ms == 9100.0
    )


def test_build_result_statuses():
    opts = RunOptions(run_id="r", backend="gpu")
    one = Rendered(1, "S", 1)
    sampler = build_result(one, 0, None, _files("gpu_sampler_fallback"), opts)
    assert sampler.status == "ok" and sampler.backend == "gpu"  # the model ran on the GPU
    assert sampler.backend_requested == "gpu" and sampler.error.startswith("warning: gpu_sampler_cpu_fallback")
    crash = build_result(one, 139, None, {"stdout": "", "stderr": ""}, opts)  # SIGSEGV in a driver
    assert crash.status == "crash" and crash.signal == 11 and crash.exit_code is None
    assert build_result(one, 134, None, _files("oom"), opts).status == "oom"
    killed = build_result(one, 137, None, {"stdout": "", "stderr": "", "trace.tsv": "1\t131072\t131072\t0\t1\t1\n"}, opts)
    assert killed.status == "killed" and "without evidence of memory pressure (peak 128 MB" in killed.error
    near = build_result(one, 137, None, {"stdout": "", "stderr": "", "trace.tsv": "1\t7500000\t7500000\t0\t1\t1\n"}, opts, 8000.0)
    assert near.status == "oom" and "of 8000 MB available" in near.error  # a peak near the available memory
    assert build_result(one, 124, None, {"stdout": "", "stderr": ""}, opts).status == "timeout"
    link = build_result(one, 1, None, _files("link_error"), opts)
    assert link.status == "error" and "CANNOT LINK" in link.error
    multi = build_result(Rendered(2, "MT", 2), 0, None, _files("multi_turn"), opts)
    assert multi.output == "You told me your name is Sam." and len(multi.turns) == 2


def test_preflight_storage_and_ram():
    phone = DeviceInfo(name="p", kind="adb", ram_mb=8000.0, free_storage_mb=3000.0)
    assert preflight(phone, 2 * 2**30) == ""
    assert "needs" in preflight(phone, 3 * 2**30)
    assert preflight(phone, 3 * 2**30, model_on_device=True) == ""
    small = DeviceInfo(name="p", kind="adb", ram_mb=3000.0, free_storage_mb=50000.0)
    assert "RAM" in preflight(small, 2800 * 2**20)
    assert preflight(DeviceInfo(name="p", kind="adb"), 10 * 2**30) == ""  # unknown: let it try
