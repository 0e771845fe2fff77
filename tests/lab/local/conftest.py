"""Real runs on this host: the real litert_lm runtime, the bundled tiny models, the `edgefarm` CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
MODELS = REPO / "data" / "models"
TINY_MM = MODELS / "tiny-mm.litertlm"
TINY_TEXT = MODELS / "tiny-text.litertlm"
BUNDLED = REPO / "data" / "edgemmeval"


def edgefarm(*args: str, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the real console entry point as a user would (a child process)."""
    full_env = {**os.environ, "COLUMNS": "200", **(env or {})}
    full_env.pop("EDGEFARM_INVENTORY", None)
    return subprocess.run(
        [sys.executable, "-m", "orchestrator", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
        cwd=REPO,
        check=False,
    )


@pytest.fixture(scope="session")
def canned() -> list[dict]:
    return json.loads((MODELS / "canned.json").read_text())


@pytest.fixture()
def local_inventory(tmp_path: Path):
    """An inventory whose `this-host` keeps its work folder inside the test's tmp_path."""

    def make(python: str | None = None) -> Path:
        inv = tmp_path / "devices.yaml"
        entry = {"name": "this-host", "kind": "local", "workdir": str(tmp_path / "work")}
        if python:
            entry["python"] = python
        inv.write_text(json.dumps({"devices": [entry]}))
        return inv

    return make
