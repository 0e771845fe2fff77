"""Issue 22 on a lab phone: a SIGKILLed runner is `oom` only with evidence the phone gives.

The phone here has 64 MB available (its /proc/meminfo's MemAvailable): a runner SIGKILLed while it
holds ~75 MB is `oom` by its peak; one whose kill the low-memory killer recorded (the lab's `logcat`
prints lmkd's line naming its pid) is `oom` by that record; one SIGKILLed at ~15 MB, with lmkd
records of OTHER pids in the log, is `killed`. The roomy-phone case (3 GB available) is
test_driver.py's killed-not-oom test.
"""

from __future__ import annotations

from pathlib import Path

from orchestrator.datasets import BUNDLED_DATASET, load_dataset
from orchestrator.runners.base import RunOptions

from .sandbox import LAB_LOGCAT, PIXEL_8, PhoneSpec
from .test_driver import model, phone, run_job  # noqa: F401 - model is a fixture

REAL_LMKD = Path(__file__).resolve().parents[2] / "unit" / "fixtures" / "real"


def test_a_sigkill_is_oom_only_with_the_phones_evidence(adb_lab, model, tmp_path):  # noqa: F811
    spec = PhoneSpec(name="Tight", props=dict(PIXEL_8.props, **{"ro.product.model": "Tight Phone"}),
                     meminfo_available_kb=64 * 1024)  # fmt: skip
    adb_lab.add_phone("tight", spec, server=1)
    try:
        data = adb_lab.device_root("tight")
        # lmkd's real records of other processes (rknn-llm#249): they name other pids, so they prove nothing
        (data / LAB_LOGCAT.removeprefix("/data/")).write_text(
            (REAL_LMKD / "lmkd_rk3588_rknn249.txt").read_text()
        )
        texts = [s for s in load_dataset(BUNDLED_DATASET).samples if s.modality == "text"][:4]
        (data / "local" / "tmp" / "edgefarm-lab-faults").write_text(
            f"hog {texts[0].turns[0].text[:40]}\nlmkd {texts[1].turns[0].text[:40]}\n"
            f"kill {texts[2].turns[0].text[:40]}\n"
        )
        opts = RunOptions(run_id="lab-kill-cause", sample_timeout_s=60)
        _, staged, _, results, _, _ = run_job(phone(adb_lab, "tight"), texts, model, tmp_path, opts)
    finally:
        adb_lab.remove_phone("tight")
    hog, lmkd, plain, ok = results
    assert hog.status == "oom" and hog.signal == 9, hog
    assert hog.peak_rss_mb and hog.peak_rss_mb >= 0.9 * 64, hog
    assert f"peak {hog.peak_rss_mb:.0f} MB of 64 MB available" in hog.error, hog.error

    job = data / str(staged.job).removeprefix("/data/")
    pid = (job / "samples" / "2" / "pid").read_text().strip()
    assert lmkd.status == "oom" and lmkd.signal == 9, lmkd
    assert ("memory pressure recorded: " in lmkd.error
            and f"I lowmemorykiller: Kill 'litert_lm_advanced_main' ({pid}), uid 2000" in lmkd.error), lmkd.error  # fmt: skip

    assert plain.status == "killed" and plain.signal == 9, plain
    assert plain.peak_rss_mb and plain.peak_rss_mb < 0.9 * 64, plain
    assert "without evidence of memory pressure" in plain.error and "of 64 MB available" in plain.error, (
        plain.error
    )
    assert ok.status == "ok", ok
