"""The run's settings record (android_runner/settings.py): rendered once, read back the same by every
runner; a file that is not one this version writes is refused naming its line and key."""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest

from android_runner.settings import HEADER, MAX_BYTES, RunnerSettings, SettingsError
from orchestrator.runners.base import RunOptions

FULL = RunnerSettings(model="/d/m b.litertlm", cache_dir="/d/cache", backend="gpu", vision_backend="cpu",
                      audio_backend="", threads=4, max_num_tokens=4096, sample_timeout_ms=1500, cooldown_mc=35_500,
                      cooldown_max_ms=90_000, settle_mc=2_000, settle_window_ms=5_000, settle_max_ms=30_000, lib="/d/lib/liblitert-lm.so", allow_runtime=1)  # fmt: skip


@pytest.mark.parametrize("settings", [FULL, RunnerSettings(model="m", cache_dir=":nocache")])
def test_render_then_parse_is_the_same_record(settings):
    text = settings.render()
    assert text.startswith(HEADER + "\n") and text.endswith("\n")
    assert RunnerSettings.parse(text) == settings


def test_every_key_is_written_once_in_field_order_and_no_gate_is_an_empty_value():
    lines = RunnerSettings(model="m", cache_dir="c").render().splitlines()
    assert [ln.partition("=")[0] for ln in lines[1:]] == [
        "model", "cache_dir", "backend", "vision_backend", "audio_backend", "threads", "max_num_tokens",
        "sample_timeout_ms", "cooldown_mc", "cooldown_max_ms", "settle_mc", "settle_window_ms", "settle_max_ms",
        "lib", "allow_runtime",
    ]  # fmt: skip
    back = RunnerSettings.parse("\n".join(lines) + "\n")
    assert "cooldown_mc=" in lines and "settle_mc=" in lines and back.cooldown_c is None and back.settle_c is None


def test_the_python_runners_units():
    assert (FULL.sample_timeout_s, FULL.cooldown_c, FULL.cooldown_max_s) == (1.5, 35.5, 90.0)
    assert FULL.applied() == {
        "backend": "gpu",
        "threads": 4,
        "max_num_tokens": 4096,
        "sample_timeout_ms": 1500,
    }


@pytest.mark.parametrize("field,value,said", [
    ("threads", 257, "threads: a whole number in 0..256"), ("threads", -1, "threads"), ("threads", True, "threads"),
    ("threads", 2.0, "threads"), ("max_num_tokens", 10_000_001, "max_num_tokens"),
    ("sample_timeout_ms", 0, "sample_timeout_ms: a whole number in 1..86400000"),
    ("sample_timeout_ms", 86_400_001, "sample_timeout_ms"), ("cooldown_mc", 120_001, "cooldown_mc"),
    ("cooldown_max_ms", 3_600_001, "cooldown_max_ms"), ("allow_runtime", 2, "allow_runtime"),
    ("settle_mc", 99, "settle_mc: a whole number in 100..20000"), ("settle_window_ms", 999, "settle_window_ms"),
    ("settle_max_ms", 3_600_001, "settle_max_ms"),
    ("backend", "tpu", "backend: one of cpu, gpu, npu"), ("vision_backend", "x", "vision_backend"),
    ("model", "", "required"), ("model", "a\nb", "a path on one line"), ("lib", "a\0b", "lib: a path"),
    ("cache_dir", "/" + "x" * 4095, "at most 4095 bytes"),
])  # fmt: skip
def test_a_value_out_of_bounds_is_refused_naming_its_key(field, value, said):
    fields = {"model": "m", "cache_dir": "c", field: value}
    with pytest.raises(SettingsError, match=None) as e:
        RunnerSettings(**fields)
    assert said in str(e.value)


def _text(**changed: str | None) -> str:
    lines = []
    for line in FULL.render().splitlines():
        key = line.partition("=")[0]
        if key in changed:
            if changed[key] is not None:
                lines.append(f"{key}={changed[key]}")
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("text,said", [
    (_text(**{HEADER: None}), "s:1: not an edgefarm settings file"),
    (_text(threads="4.0"), "s:7: threads: a whole number, not '4.0'"),
    (_text(threads="-1"), "s:7: threads: a whole number"),
    (_text(threads="٣"), "s:7: threads: a whole number"),  # a digit, but not an ASCII one
    (_text(threads="9" * 13), "s:7: threads: a whole number"),
    (_text(threads="300"), "s: threads: a whole number in 0..256, not 300"),
    (_text(threads=None), "s: missing threads"),
    (_text() + "threads=2\n", "s:17: threads given twice"),
    (_text() + "color=blue\n", "s:17: unknown key 'color'"),
    (_text() + "no equals sign\n", "s:17: unknown key 'no equals sign'"),
    (_text().rstrip("\n"), "s:16: the last line has no newline"),
    (HEADER + "\n" + "x" * MAX_BYTES, f"s: over {MAX_BYTES} bytes"),
])  # fmt: skip
def test_a_file_this_version_does_not_write_is_refused_naming_its_line(text, said):
    with pytest.raises(SettingsError) as e:
        RunnerSettings.parse(text, "s")
    assert said in str(e.value)


def test_the_host_makes_the_record_from_the_run_options_once():
    opts = RunOptions(run_id="r", backend="cpu", threads=2, sample_timeout_s=77.5, cooldown_c=36.25,
                      cooldown_max_s=3, max_num_tokens=None)  # fmt: skip
    s = opts.runner_settings(model=PurePosixPath("/w/m.litertlm"), cache=PurePosixPath("/w/cache"), vision=True,
                             audio=False, lib=PurePosixPath("/w/lib/liblitert-lm.so"), allow_runtime=True)  # fmt: skip
    assert s == RunnerSettings(model="/w/m.litertlm", cache_dir="/w/cache", backend="cpu", vision_backend="cpu",
                               audio_backend="", threads=2, max_num_tokens=0, sample_timeout_ms=77_500,
                               cooldown_mc=36_250, cooldown_max_ms=3000, lib="/w/lib/liblitert-lm.so",
                               allow_runtime=1)  # fmt: skip
    off = RunOptions(run_id="r").runner_settings(model=PurePosixPath("/m"), cache=PurePosixPath("/c"), vision=False,
                                                 audio=False)  # fmt: skip
    assert (off.cooldown_mc, off.threads, off.lib, off.allow_runtime) == (None, 0, "", 0)
