"""The one figure table (orchestrator/report/figure_table.py): every figure defined once, and each
device figure over the same rows as its interval."""

from __future__ import annotations

import dataclasses

from android_runner.contract import SampleResult
from orchestrator.devices.types import DeviceInfo
from orchestrator.history.types import FIGURES as HISTORY_FIGURES
from orchestrator.report.cells import SPEEDUP
from orchestrator.report.combine import device_row, percentile
from orchestrator.report.figure_table import BOOTSTRAPPED, FIGURES, HIGHER_IS_BETTER, MEASURES
from orchestrator.report.paired import PAIRED_FIGURES
from orchestrator.report.types import COLUMNS, DeviceRow, SampleCell
from orchestrator.run.types import DeviceOutcome


def test_each_figure_is_one_line_and_every_reader_takes_it_from_there():
    fields = [f.field for f in FIGURES]
    assert len(fields) == len(set(fields))
    rows = {f.name for f in dataclasses.fields(DeviceRow)}
    assert set(fields) - rows == {"speedup"}  # the one figure computed by the cells, against the baseline
    assert all(m.field in {f.name for f in dataclasses.fields(SampleCell)} for m in MEASURES)
    by_field = {c.field: c for c in COLUMNS}
    assert all(by_field[f.field] is f.column for f in FIGURES if f.field in by_field)  # the same object
    assert SPEEDUP is next(f.column for f in FIGURES if f.field == "speedup")
    assert [p[0] for p in PAIRED_FIGURES] == [m.field for m in MEASURES if m.paired]
    assert all(
        h.higher_is_better == HIGHER_IS_BETTER.get(h.field, h.higher_is_better) for h in HISTORY_FIGURES
    )
    # a figure marked best has a direction; one without (the temperature) is never marked
    assert "thermal_max_c" not in HIGHER_IS_BETTER and HIGHER_IS_BETTER["decode_tps_p50"] is True


def _row(i: str, energy: float | None, ttft: float) -> SampleResult:
    return SampleResult(id=i, status="ok", ttft_ms=ttft, energy_j=energy, backend="cpu")


def test_energy_p50_is_over_first_runs_and_repeats_as_its_interval_and_the_latency_figures():
    first = [_row("a", 1.0, 10.0), _row("b", 2.0, 20.0), _row("c", 3.0, 30.0)]
    repeats = [_row("a", 9.0, 90.0), _row("b", 8.0, 80.0), _row("c", 7.0, 70.0)]
    row = device_row(DeviceInfo("p", "adb"), DeviceOutcome(name="p", kind="adb"), first, None, repeats)
    assert row.ttft_ms_p50 == percentile([10, 20, 30, 90, 80, 70], 50) == 50.0
    assert row.energy_j_p50 == percentile([1, 2, 3, 9, 8, 7], 50) == 5.0  # was 2.0: the first runs only
    lo, hi = row.intervals["energy_j_p50"]  # the interval draws whole samples with their repeats
    assert lo <= row.energy_j_p50 <= hi and "energy_j_p50" in {f.field for f in BOOTSTRAPPED}
