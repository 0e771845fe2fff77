"""What is imported on the way to the first sample (docs/farm.md, "How the host keeps out of the way"):
`edgefarm run` up to starting this host's runner, and the runner up to its READY. Each module left
out here was measured on that path (yaml ~11 ms, importlib.metadata ~12 ms, the transports more)."""

from __future__ import annotations

import subprocess
import sys

from orchestrator.bundled import REPO_ROOT


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint(' '.join(sys.modules))"],
        capture_output=True, text=True, check=True, cwd=REPO_ROOT,
    ).stdout  # fmt: skip
    return set(out.split())


def test_the_run_command_starts_this_hosts_runner_without_these():
    loaded = _modules_after(
        "import orchestrator.cli.run, orchestrator.runners.python_runner\n"
        "from orchestrator.inventory import hosts_chosen, load_inventory\n"
        "assert [d.name for d in hosts_chosen(load_inventory(None), 'local')]"
    )
    unwanted = {
        "yaml",
        "jsonschema",
        "importlib.metadata",
        "adbutils",
        "asyncssh",
        "nltk",
        "rich",
        "litert_lm",
    }
    assert loaded & unwanted == set()


def test_the_runner_reaches_its_ready_line_without_these():
    loaded = _modules_after(
        "import android_runner.litert_runner as r\nassert r.runtime_identity()['runtime_version']"
    )
    assert loaded & {"importlib.metadata", "email", "zipfile", "subprocess"} == set()
