"""Without --cluster, Ray is never imported (docs/cluster.md): the whole CLI and the run path load
without it, while `ray` itself is installed in the test environment (the cluster extra)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

from orchestrator.bundled import REPO_ROOT


def test_the_cli_and_a_runs_imports_leave_ray_out():
    assert importlib.util.find_spec("ray") is not None, (
        "install the cluster extra: pip install -e '.[test,cluster]'"
    )
    code = (
        "import orchestrator.cli, orchestrator.cli.run, orchestrator.cli.devices, orchestrator.farm.local\n"
        "import orchestrator.farm.session, orchestrator.run.plan, orchestrator.run.execute, orchestrator.run.finish\n"
        "import orchestrator.cluster, orchestrator.cluster.agent, orchestrator.cluster.types\n"
        "import orchestrator.cluster.hostcache, orchestrator.cluster.blob\n"
        "import sys; print(' '.join(sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO_ROOT
    )
    loaded = set(out.stdout.split())
    assert "orchestrator.cli.run" in loaded
    assert {m for m in loaded if m == "ray" or m.startswith("ray.")} == set()
