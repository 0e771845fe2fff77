"""The one figure catalogue (orchestrator/catalogue.py): every figure defined once, each reader walks it,
outside names mapped once, and each device figure over the same rows as its interval."""

from __future__ import annotations

import dataclasses

import pytest

from android_runner.contract import SampleResult
from orchestrator import catalogue
from orchestrator.catalogue import (
    BOOTSTRAPPED,
    DATABASE,
    FIGURES,
    HIGHER_IS_BETTER,
    MEASURES,
    Figure,
    Measure,
    figures,
    outside_names,
)
from orchestrator.devices.types import DeviceInfo
from orchestrator.farm.types import DeviceOutcome
from orchestrator.history.schema import MIGRATIONS
from orchestrator.history.types import FIGURES as HISTORY_FIGURES
from orchestrator.history.types import SAMPLE_FIELDS as KEPT_FIELDS
from orchestrator.report.cells import DECISIVE, SPEEDUP
from orchestrator.report.combine import device_row, percentile
from orchestrator.report.paired import PAIRED_FIGURES
from orchestrator.report.tables import DEVICE_FIGURES
from orchestrator.report.types.device_row import COLUMNS, DeviceRow
from orchestrator.report.types.sample_row import SAMPLE_FIELDS, SampleCell


def test_each_figure_is_one_row_and_every_reader_takes_it_from_there():
    names = [f.field for f in FIGURES]
    assert len(names) == len(set(names)) and len(MEASURES) == len({m.name for m in MEASURES})
    # a device figure named like a sample's is that measure's statistic (peak_rss_mb: the largest)
    assert all(catalogue.FIGURE[m.name].measure == m.name for m in MEASURES if m.name in names)
    rows = {f.name for f in dataclasses.fields(DeviceRow)}
    assert {f.field for f in FIGURES} - rows == {"speedup"}  # computed by the cells, against the baseline
    cell_fields = {f.name for f in dataclasses.fields(SampleCell)}
    result_fields = {f.name for f in dataclasses.fields(SampleResult)}
    for m in MEASURES:  # the cell keeps every measure; the device reports it
        assert m.name in cell_fields and m.name in SAMPLE_FIELDS
        assert set(m.sources or (m.name,)) <= result_fields
    for f in FIGURES:  # a statistic of a measure names one
        assert not f.measure or f.measure in catalogue.MEASURE
    by_field = {c.field: c for c in COLUMNS}
    assert all(by_field[f.field] is f.column for f in FIGURES if f.field in by_field)  # the same object
    assert SPEEDUP is catalogue.FIGURE["speedup"].column
    assert [p[0] for p in PAIRED_FIGURES] == [m.name for m in MEASURES if m.paired]
    assert HISTORY_FIGURES == figures(catalogue.HISTORY) and DECISIVE[:2] == (
        "pass_rate_pct",
        "strict_pass_rate_pct",
    )
    assert DEVICE_FIGURES == tuple(f.field for f in figures(catalogue.EXPORT))
    assert set(KEPT_FIELDS) <= cell_fields
    # a figure marked best has a direction; one without (the temperature) is never marked
    assert "thermal_max_c" not in HIGHER_IS_BETTER and HIGHER_IS_BETTER["decode_tps_p50"] is True


def test_outside_names_map_to_catalogue_names_and_the_database_migrates_its_own():
    known = {f.field for f in FIGURES} | {m.name for m in MEASURES} | {"mean", "sd", "samples"}
    assert all(o.name in known for o in catalogue.OUTSIDE_NAMES)
    statements = " ".join(s for version in MIGRATIONS for s in version)
    for old, o in outside_names(DATABASE).items():  # every old database name is renamed by a migration
        assert f"SET figure = '{o.name}' WHERE figure = '{old}'" in statements


def test_register_refuses_a_name_twice():
    with pytest.raises(ValueError, match="decode_tps"):
        catalogue.register(Measure("decode_tps", "Decode", "tok/s", True))
    with pytest.raises(ValueError, match="sample_ms_p50"):
        catalogue.register(None, Figure(catalogue.Column("sample_ms_p50", "x"), False))


def test_a_figure_without_a_percentile_has_no_q():
    assert catalogue.FIGURE["ttft_ms_p90"].q == 90.0 and catalogue.FIGURE["peak_rss_mb"].q is None


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
