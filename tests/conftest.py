"""What the whole suite shares, serial or spread over pytest-xdist workers (`scripts/test.sh` runs
`-n 4 --dist loadgroup`; docs/testing.md):

- each session (each worker) gets its OWN, empty edgefarm cache folder (EDGEFARM_CACHE_DIR): the
  default local device's work folder lives there and is guarded by the one-run-per-device lock, so
  two workers (or a developer's own run) sharing ~/.cache/edgefarm/local would refuse each other; and
  nothing a developer's cache holds can make a test pass (a fresh machine has none). Its results
  database (EDGEFARM_DB) lives there too: every `edgefarm run` records itself, and a test's runs must
  not land in the user's own history.
- tests are grouped for `--dist loadgroup`: a test whose fixtures live per module (or class) stays
  with its module, per package with its package, and the Ray cluster lab's stories in two groups (each
  worker that takes one builds its own cluster). The longest chains are handed out first.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from pathlib import Path

import pytest

_OWN_CACHE: list[Path] = []
_UNGROUPED: set[str] = set()  # grouped tests whose id xdist did not mark (pytest_collection_finish)
# The longest chains, each handed to a worker from the start: the Ray cluster's group, then the aarch64
# board's stories under qemu (its module group of `setup --offline`, then the online story on its own).
FIRST = ("tests/lab/cluster/", "tests/lab/ssh/test_arm_board.py")
# The Ray cluster lab's stories run as two groups, each on its own worker with its own cluster (a private
# network namespace each, so they cannot meet): as one group they were the suite's longest chain (~1650 s
# of the 2090 s wall on a machine at load 13; docs/testing.md). This is the second group, about half the
# time; a new story goes to the first unless listed here. A story that kills the head sorts last.
CLUSTER_SECOND_GROUP = {
    "test_agent_crash.py", "test_bench.py", "test_both_farms.py", "test_controller_killed.py", "test_host_dies.py",
    "test_identical_phones.py", "test_zz_head_lost.py",
}  # fmt: skip


def pytest_configure(config: pytest.Config) -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    own = Path(tempfile.mkdtemp(prefix=f"edgefarm-test-cache-{worker}-"))
    os.environ["EDGEFARM_CACHE_DIR"] = str(own)
    os.environ["EDGEFARM_DB"] = str(own / "history.sqlite")
    _OWN_CACHE.append(own)


def pytest_unconfigure(config: pytest.Config) -> None:
    while _OWN_CACHE:
        shutil.rmtree(_OWN_CACHE.pop(), ignore_errors=True)


def _group(item: pytest.Item) -> str | None:
    path = Path(str(item.path)).relative_to(Path(str(item.config.rootpath)))
    if path.parts[:3] == ("tests", "lab", "cluster"):
        return "cluster-lab-2" if path.name in CLUSTER_SECOND_GROUP else "cluster-lab-1"
    names = set(item.fixturenames)
    scopes = {d[-1].scope for n, d in item._fixtureinfo.name2fixturedefs.items() if n in names and d}
    if "package" in scopes:
        return str(path.parent)
    if scopes & {"module", "class"}:
        return str(path)
    return None


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads the groups into the test ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.pluginmanager.hasplugin("xdist"):
        return  # `-p no:xdist`: nothing reads the groups
    for item in items:
        group = _group(item)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # xdist (`--no-loadscope-reorder`) hands out groups in this order: the longest first, then the lab
        # stories, then the unit tests that fill the gaps; a serial run keeps the files' order.
        def rank(item: pytest.Item) -> int:
            first = [n for n, prefix in enumerate(FIRST) if item.nodeid.startswith(prefix)]
            return first[0] if first else len(FIRST) + ("tests/unit/" in item.nodeid)

        items.sort(key=rank)


def pytest_collection_finish(session: pytest.Session) -> None:
    """On a worker of `--dist loadgroup`: every grouped test's id must carry its group, as xdist writes it.
    pytest-xdist 3.8 cannot under pytest 9 (which computes test ids anew): the groups would be ignored
    without a word and two Ray clusters would start at once, so each such test fails instead."""
    if getattr(session.config.option, "loadgroup", False):
        _UNGROUPED.update(
            i.nodeid for i in session.items if i.get_closest_marker("xdist_group") and "@" not in i.nodeid
        )


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.nodeid in _UNGROUPED:
        pytest.fail(
            f"pytest-xdist did not apply this test's group (pytest {pytest.__version__}), so its lab could be "
            "built twice at once\n  fix: reinstall the test extra (`pip install -e '.[test]'`: its pytest pin) "
            "or run with `-n 0`", pytrace=False)  # fmt: skip


# ---------------------------------------------------------------- backend matrix reports (docs/matrix.md)
# Synthetic run reports of device x backend units, for the matrix's statistics (tests/unit/report) and its
# fit in a terminal and a 1280 px page (tests/lab/local/test_matrix_fits.py).
MATRIX_SAMPLES = 60


@pytest.fixture()
def matrix_row():
    from orchestrator.report.types.device_row import DeviceRow

    def row(unit: str, cells: dict, error: str = "", backend: str = "") -> DeviceRow:
        ran = list(cells.values())
        passed = sum(1 for c in ran if c.passed)
        return DeviceRow(device=unit, kind="adb", hardware="", soc="", backend=backend or unit.split("@")[1],
                         samples=len(ran), scored=len(ran), passed=passed,
                         pass_rate_pct=round(100 * passed / len(ran), 1) if ran else None, verdict="", init_ms=None,
                         ttft_ms_p50=None, ttft_ms_p90=None, prefill_tps_p50=None,
                         decode_tps_p50=12345.6 if ran else None, peak_rss_mb=12345.6 if ran else None,
                         sample_ms_p50=123456.7 if ran else None, energy_j_p50=1234.56 if ran else None,
                         peak_anon_mb=None, wall_s=None, error=error,
                         status_counts={"ok": len(ran)} if ran else {})  # fmt: skip

    return row


@pytest.fixture()
def matrix_report(matrix_row):
    """report(verdicts, errors): unit -> its 60 verdicts (answers 'right' / 'drifted', a time each); unit ->
    the error of a unit that did not run."""
    import random

    from orchestrator.report.types.run_report import RunReport
    from orchestrator.report.types.sample_row import SampleCell, SampleRow

    def report(verdicts: dict[str, list[bool]], errors: dict[str, str] | None = None) -> RunReport:
        rng = random.Random(1)
        cells = {u: {f"S{i:02d}": SampleCell(status="ok", passed=v[i], score=None, ttft_ms=None, decode_tps=None,
                                             output="right" if v[i] else "drifted", wall_ms=100 + rng.random())
                     for i in range(MATRIX_SAMPLES)} for u, v in verdicts.items()}  # fmt: skip
        rows = [matrix_row(u, cells[u]) for u in verdicts] + [matrix_row(u, {}, e) for u, e in (errors or {}).items()]
        samples = [SampleRow(f"S{i:02d}", "text", "qa", {u: cells[u][f"S{i:02d}"] for u in verdicts})
                   for i in range(MATRIX_SAMPLES)]  # fmt: skip
        return RunReport(schema_version=3, run_id="r", run={}, devices=tuple(rows), samples=tuple(samples))

    return report


@pytest.fixture()
def wide_matrix_report(matrix_report):
    """4 phones x 3 backends with its matrix: cpu right on all, gpu turning 20 of 60, npu not available on
    one phone."""
    from orchestrator.report.matrix import backend_matrix

    verdicts, errors = {}, {}
    for k, phone in enumerate(("pixel-8-pro", "sm-s921b", "redmi-note-13", "oneplus-12")):
        verdicts[f"{phone}@cpu"] = [True] * MATRIX_SAMPLES
        verdicts[f"{phone}@gpu"] = [i % 3 != k % 3 for i in range(MATRIX_SAMPLES)]
        if k == 1:
            errors[f"{phone}@npu"] = f"{phone}@npu: the npu backend is not available on this device (npu_context_error)"
        else:
            verdicts[f"{phone}@npu"] = [True] * MATRIX_SAMPLES
    r = matrix_report(verdicts, errors)
    return dataclasses.replace(r, matrix=backend_matrix(r))
