"""The runtime pin (android_runner/runtime_pin.py) is the one pyproject.toml installs: the native runner
refuses any other library, so the two drifting apart would refuse the host's own runtime."""

from __future__ import annotations

import tomllib

from android_runner.runtime_pin import PINNED_REQUIREMENT
from orchestrator.bundled import REPO_ROOT


def test_the_pin_is_the_one_pyproject_installs():
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    deps = pyproject["project"]["dependencies"]
    assert PINNED_REQUIREMENT in deps, (PINNED_REQUIREMENT, [d for d in deps if d.startswith("litert")])
