"""scripts/module_graph.py checks the floors: an arrow from a module to a higher floor's fails the
check unless ALLOWED_CLIMBS names it, a module no floor names fails it, and this checkout passes with
0 cycles and at most MAX_CLIMBS arrows running back up."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "module_graph.py"


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "android_runner").mkdir(exist_ok=True)
    (root / "android_runner" / "native").mkdir(exist_ok=True)
    return root


def _graph(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(root)], capture_output=True, text=True, check=False
    )


def test_this_checkout_has_no_cycle_and_no_climb_but_the_allowed_ones():
    done = _graph(REPO)
    assert done.returncode == 0, done.stdout
    assert "cycles: 0" in done.stdout and "modules on no floor: 0" in done.stdout
    climbs = int(done.stdout.split("arrows climbing a floor: ")[1].split()[0])
    assert climbs <= 3


def test_an_arrow_climbing_a_floor_fails_naming_it(tmp_path: Path):
    root = _tree(tmp_path, {
        "orchestrator/__init__.py": "",
        "orchestrator/farm/__init__.py": "",
        "orchestrator/farm/session.py": "from ..run import plan\n",  # the farm reaching up into the run
        "orchestrator/run/__init__.py": "",
        "orchestrator/run/plan.py": "from ..farm import session\n",
    })  # fmt: skip
    done = _graph(root)
    assert done.returncode == 1
    assert "arrows climbing a floor: 1" in done.stdout
    assert "orchestrator.farm.session -> orchestrator.run.plan" in done.stdout
    assert "cycles: 1" in done.stdout  # and the two make a circle


def test_a_module_no_floor_names_fails_with_the_fix(tmp_path: Path):
    root = _tree(tmp_path, {"orchestrator/__init__.py": "", "orchestrator/newthing.py": "x = 1\n"})
    done = _graph(root)
    assert done.returncode == 1
    assert "orchestrator.newthing: add it to FLOORS in scripts/module_graph.py" in done.stdout
