"""The lm-eval plugin's --model_args (serve/harness.py HarnessArgs) and its refusal without lm-eval."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.errors import ConfigError
from orchestrator.serve.harness import HarnessArgs

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
