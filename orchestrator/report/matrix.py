"""The device x backend matrix of a run (pure; issue 44, docs/matrix.md): a row per device, a column per
backend, built from the report's rows of the run's units (devices/units.py: pixel-8@gpu).

Each cell holds the unit's accuracy with its interval, validity, speed, memory and energy, or why it did
not run (the unit's error: gpu_unavailable, npu_context_error, ...; a unit whose rows ran on another
engine than asked is a fallback, never a silent CPU run). Against the same device's CPU unit, on the same
samples: the paired accuracy difference with its interval and the exact McNemar test (report/paired.py,
the report's own pair), the samples whose verdict flips with both answers, the first differing token and
the per-token log-likelihood gap (--fidelity: report/fidelity.py against that CPU unit). A cell is
flagged only when McNemar rejects at ALPHA; ★ marks the best backend of a device only when the paired test
separates it (report/verdict.py, over that device's units alone)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from android_runner.backend import BACKENDS, FAILURE_KINDS

from ..devices.units import split_unit
from ..stats import ALPHA, paired_difference_ci
from .best import Entry
from .fidelity import compare_sample, device_fidelity
from .paired import pair
from .types.device_row import DeviceRow
from .types.matrix import BackendMatrix, Flip, MatrixCell
from .types.paired import Paired
from .types.run_report import RunReport
from .types.sample_row import SampleRow
from .verdict import figure_marks

FALLBACK = "backend_fallback"  # android_runner/backend.py's failure for rows that ran on another engine

# the catalogue's figures a cell shows beside its pass rate (labels, units, formats: catalogue.FIGURE)
MATRIX_FIGURES = ("sample_ms_p50", "decode_tps_p50", "peak_rss_mb", "energy_j_p50")
MARKED = ("pass_rate_pct", "sample_ms_p50")  # the figures ★ is decided on, each by its paired test


def reason_of(row: DeviceRow, backend: str) -> str:
    """Why a unit did not run as asked: its error's failure kind and first words, or a fallback."""
    if row.error:
        kind = next((k for k in (*FAILURE_KINDS, FALLBACK) if k in row.error), "error")
        said = " ".join(row.error.split(": ", 1)[-1].split())[:300]  # the runtime's words are on the next lines
        return f"{kind}: {said}"
    ran = {b for b in row.backend.split(",") if b}
    if ran and ran != {backend}:
        return f"{FALLBACK}: asked {backend}, the runtime ran {','.join(sorted(ran))}"
    if row.samples and not row.status_counts.get("ok"):
        return "no answer: " + ", ".join(f"{n} {k}" for k, n in sorted(row.status_counts.items()))
    return ""


def answered(row: DeviceRow) -> bool:
    """The unit answered on some sample: it did not fail, and not every row is an error (a fallback's)."""
    return row.samples > 0 and not row.error and bool(row.status_counts.get("ok"))


def _validity(row: DeviceRow) -> float | None:
    """The share of tool calls / structured outputs that parse, as a percentage: evalscope's function-call
    schema_accuracy, or the EdgeMMEval rows' (combine.format_valid); None when the set has none."""
    metrics = row.metrics or {}
    v = metrics.get("schema_accuracy", metrics.get("format_valid"))
    return round(100.0 * v, 1) if isinstance(v, (int, float)) else None


def _flips(samples: Sequence[SampleRow], cpu: str, unit: str) -> tuple[Flip, ...]:
    out = []
    for s in samples:
        a, b = s.cells.get(cpu), s.cells.get(unit)
        if a is None or b is None or a.passed is None or b.passed is None or a.passed == b.passed:
            continue
        first = compare_sample(s.id, a.fidelity, b.fidelity).first_diff if a.fidelity and b.fidelity else None
        out.append(Flip(s.id, bool(a.passed), bool(b.passed), a.output, b.output, first))
    return tuple(out)


def _against(cell: MatrixCell, report: RunReport, cpu: str, p: Paired) -> MatrixCell:
    diff = paired_difference_ci(p.a_only, p.b_only, p.common)
    wall = p.figure("wall_ms")
    fid = device_fidelity(cell.unit, cpu, report.samples) if report.fidelity is not None else None
    return replace(
        cell, against=cpu, common=p.common, p_value=p.p_value, flagged=p.common > 0 and p.p_value < ALPHA,
        diff_pts=round(100.0 * (p.b_only - p.a_only) / p.common, 1) if p.common else None,
        diff_ci=(round(100 * diff[0], 1), round(100 * diff[1], 1)) if diff is not None else None,
        speed_ratio=wall.ratio if wall is not None else None, flips=_flips(report.samples, cpu, cell.unit),
        mean_abs_dlogp=fid.mean_abs_dlogp if fid is not None else None,
        fidelity_verdict=fid.verdict if fid is not None else "",
    )  # fmt: skip


def _marks(
    report: RunReport, rows: Sequence[DeviceRow], cpu: str, pairs: Sequence[Paired]
) -> dict[str, dict]:
    """unit -> figure -> best/tied among one device's backends (verdict.py on that device alone)."""
    ran = [r for r in rows if answered(r)]
    if len(ran) < 2:
        return {}
    sub = replace(report, devices=tuple(ran), baseline=cpu if any(r.device == cpu for r in ran) else ran[0].device,
                  paired=tuple(pairs))  # fmt: skip
    out: dict[str, dict] = {r.device: {} for r in ran}
    for field in MARKED:
        entries = [Entry(getattr(r, field), r.intervals.get(field), str(getattr(r, field)),
                         not r.partial and not r.error) for r in ran]  # fmt: skip
        for r, m in zip(ran, figure_marks(sub, field, entries), strict=True):
            if m:
                out[r.device][field] = m
    return out


def backend_matrix(report: RunReport) -> BackendMatrix | None:
    """The run's matrix, or None when no row is a device x backend unit (a run of one backend each)."""
    units = [(split_unit(r.device), r) for r in report.devices]
    if not any(b for (_, b), _ in units):
        return None
    devices = tuple(dict.fromkeys(d for (d, _), _ in units))
    backends = tuple(b for b in BACKENDS if any(x == b for (_, x), _ in units))
    cells = []
    for device in devices:
        rows = {b: r for (d, b), r in units if d == device}
        cpu = rows.get("cpu")
        cpu_ok = cpu is not None and answered(cpu)
        mine: list[MatrixCell] = []
        pairs = []
        for backend, r in rows.items():
            cell = MatrixCell(
                device, backend, r.device, reason_of(r, backend), r.samples, r.pass_rate_pct,
                r.intervals.get("pass_rate_pct"), _validity(r), {f: getattr(r, f) for f in MATRIX_FIGURES},
                ran=answered(r),
            )  # fmt: skip
            if cpu_ok and backend != "cpu" and cell.ran:
                p = pair(cpu.device, r.device, _cells(report, cpu.device), _cells(report, r.device))
                pairs.append(p)
                cell = _against(cell, report, cpu.device, p)
            mine.append(cell)
        marks = _marks(report, list(rows.values()), cpu.device if cpu is not None else "", pairs)
        cells += [replace(c, marks=marks.get(c.unit, {})) for c in mine]
    return BackendMatrix(devices, backends, tuple(cells))


def _cells(report: RunReport, name: str) -> dict:
    return {s.id: s.cells[name] for s in report.samples if name in s.cells}


__all__ = ["BackendMatrix", "Flip", "MatrixCell", "backend_matrix", "reason_of"]
