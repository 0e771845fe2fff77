"""The lmkd records that count as evidence for a runner's SIGKILL: only those naming its pid."""

from __future__ import annotations

from pathlib import Path

from orchestrator.runners.android_kills import records_naming

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"


def test_only_the_records_naming_the_pid_are_kept_from_real_lmkd_logs():
    rk = (REAL / "lmkd_rk3588_rknn249.txt").read_text()  # logcat threadtime form (rknn-llm#249)
    assert records_naming(rk, 10280).startswith("04-29 09:41:12.195   300   300 I lowmemorykiller: Kill ")
    assert "(10280)" in records_naming(rk, 10280) and records_naming(rk, 10280).count("\n") == 0
    assert records_naming(rk, 1028) == "" and records_naming(rk, 300) == ""  # lmkd's own pid is not a kill
    pixel = (REAL / "lmkd_pixel8_executorch5582.txt").read_text()  # Android Studio's logcat form
    assert "Kill 'com.google.android.GoogleCamera' (16267)" in records_naming(pixel, 16267)
    kernel = "[ 812.1] Out of memory: Killed process 4242 (litert_lm_advan) total-vm:9000kB"
    assert records_naming(kernel, 4242) == kernel.strip() and records_naming(kernel, 424) == ""
