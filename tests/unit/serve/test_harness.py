"""The lm-eval plugin's --model_args (serve/harness.py HarnessArgs), its rolling windows, and its refusal
without lm-eval."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from android_runner.contract import FIDELITY_TARGET_MAX_CHARS
from orchestrator.errors import ConfigError, EdgefarmError
from orchestrator.serve.harness import (
    ROLLING_MAX_BYTES,
    DeviceHarness,
    HarnessArgs,
    text_windows,
    window_bytes,
)

REPO = Path(__file__).resolve().parents[3]


def test_model_args_become_the_record_with_their_types() -> None:
    a = HarnessArgs.parse({"device": "pixel-8", "backend": "gpu", "threads": "4", "inventory": "~/d.yaml",
                           "sample_timeout_s": 30, "max_gen_toks": 64})  # fmt: skip
    assert (a.device, a.backend, a.threads) == ("pixel-8", "gpu", 4)
    assert (a.sample_timeout_s, a.max_gen_toks) == (30.0, 64)
    assert a.inventory == Path("~/d.yaml").expanduser()


@pytest.mark.parametrize(
    ("args", "said", "fix"),
    [
        ({"device": "x", "colour": "red"}, "unknown key(s) colour", "keys are device, backend"),
        ({}, "no device named", "device=NAME"),
        ({"device": "all"}, "is not ONE device", "name one device"),
        ({"device": "a,b"}, "is not ONE device", "name one device"),
        ({"device": "x", "backend": "tpu"}, "backend=tpu is not a backend", "cpu"),
        ({"device": "x", "threads": 0}, "threads=0 is out of its range", "threads=1..256"),
        ({"device": "x", "max_gen_toks": 10**7}, "out of its range", "max_gen_toks=1..4096"),
        ({"device": "x", "sample_timeout_s": "soon"}, "is not a number", "sample_timeout_s=1.0..86400.0"),
    ],
)
def test_bad_model_args_name_the_key_and_the_fix(args: dict, said: str, fix: str) -> None:
    with pytest.raises(ConfigError) as e:
        HarnessArgs.parse(args)
    assert said in e.value.what and fix in e.value.fix and e.value.where == "lm_eval --model_args"


def test_the_plugin_without_lm_eval_says_how_to_install_it() -> None:
    """lm-eval is an extra: a Python where it cannot be imported gets the install line, not a bare ImportError."""
    code = "import sys; sys.modules['lm_eval'] = None\nimport orchestrator.serve.lmeval"
    p = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60, check=False
    )
    assert p.returncode != 0
    assert "lm-eval is not installed" in p.stderr and "pip install 'edgefarm[lmeval]'" in p.stderr, p.stderr


@pytest.mark.parametrize(
    ("text", "max_bytes", "windows"),
    [
        ("", 8, []),
        ("short", 8, ["short"]),
        ("one two three four", 8, ["one two", " three", " four"]),  # cut where a whitespace run begins
        ("one  two   three", 9, ["one  two", "   three"]),
        ("abcdefghijkl", 5, ["abcde", "fghij", "kl"]),  # no whitespace: cut at a character
        ("héhéhé", 5, ["héh", "éhé"]),  # é is 2 bytes: never cut inside a character
    ],
)
def test_a_rolling_text_is_cut_into_windows_that_join_back(
    text: str, max_bytes: int, windows: list[str]
) -> None:
    got = text_windows(text, max_bytes)
    assert got == windows and "".join(got) == text
    assert all(len(w.encode()) <= max_bytes for w in got)


def test_a_window_fits_the_context_and_a_scored_reference() -> None:
    assert window_bytes(None) == window_bytes(10**6) == FIDELITY_TARGET_MAX_CHARS
    assert window_bytes(2048) == 2046  # the runtime scores at most context - 1 tokens; one more for a BOS
    with pytest.raises(EdgefarmError) as e:
        window_bytes(5, where="pixel-8/cpu")
    assert "leaves no window" in e.value.what and e.value.where == "pixel-8/cpu"
    with pytest.raises(ValueError):
        text_windows("abc", 3)


@pytest.mark.parametrize(
    ("call", "said"),
    [
        (lambda h: h.rolling("x" * (ROLLING_MAX_BYTES + 1)), "over loglikelihood_rolling's bound of 1000000"),
        (lambda h: h.score("context", " \n "), "whitespace only cannot be scored"),
        (lambda h: h.score("context", "y" * (FIDELITY_TARGET_MAX_CHARS + 1)), "over the scoring pass's 4000"),
    ],
)
def test_a_request_over_a_bound_is_refused_before_it_reaches_the_device(call, said: str) -> None:
    """Checked on the host first: the harness's device is never asked (it has none here)."""
    with pytest.raises(EdgefarmError) as e:
        call(DeviceHarness.__new__(DeviceHarness))
    assert said in e.value.what and e.value.fix
