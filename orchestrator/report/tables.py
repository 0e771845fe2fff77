"""Flat exports for pandas and spreadsheets: one row per device and sample, every figure.

`edgefarm report RUN --format csv` / `--format jsonl`. Columns are declared once (ROW_FIELDS): the
run and device identity, then the sample, then every SampleCell field."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any

from ..catalogue import EXPORT, figures
from .fidelity_views import cell_figures
from .types.run_report import RunReport
from .types.sample_row import SAMPLE_FIELDS

# the device's figures with their 95% intervals (the same on each of its rows): pandas can group
# by device and read them without report.json
DEVICE_FIGURES = tuple(f.field for f in figures(EXPORT))
DEVICE_SETTINGS = ("threads", "quantization", "repeat")
# --fidelity: the cell against the reference device (report/fidelity.py; empty in other runs)
FIDELITY_FIELDS = ("fidelity_reference", "fidelity_tokens", "fidelity_mean_abs_dlogp", "fidelity_max_abs_dlogp",
                   "fidelity_first_diff", "fidelity_unscored")  # fmt: skip
ROW_FIELDS = (
    ("run_id", "device", "hardware", "soc", "device_backend", "sample_id", "modality", "task")
    + SAMPLE_FIELDS
    + ("reference",)
    + FIDELITY_FIELDS
    + DEVICE_SETTINGS
    + tuple(f"device_{f}{end}" for f in DEVICE_FIGURES for end in ("", "_lo", "_hi"))
)


def flat_rows(report: RunReport) -> Iterator[dict[str, Any]]:
    devices = {r.device: r for r in report.devices}
    fidelity = cell_figures(report)
    for s in report.samples:
        for name, c in s.cells.items():
            d = devices.get(name)
            row: dict[str, Any] = {
                "run_id": report.run_id,
                "device": name,
                "hardware": d.hardware if d else "",
                "soc": d.soc if d else "",
                "device_backend": d.backend if d else "",
                "sample_id": s.id,
                "modality": s.modality,
                "task": s.task,
            }
            row.update({f: getattr(c, f) for f in SAMPLE_FIELDS})
            row["reference"] = s.reference
            row.update(_fidelity_cells(report, fidelity.get((name, s.id)), c))
            row.update({f: getattr(d, f) if d else None for f in DEVICE_SETTINGS})
            for f in DEVICE_FIGURES:
                ci = d.intervals.get(f) if d else None
                row[f"device_{f}"] = getattr(d, f) if d else None
                row[f"device_{f}_lo"], row[f"device_{f}_hi"] = ci if ci else (None, None)
            yield row


def _fidelity_cells(report: RunReport, f, cell) -> dict[str, Any]:
    """The FIDELITY_FIELDS of one cell: None when the run has no fidelity or the cell no comparison."""
    out: dict[str, Any] = dict.fromkeys(FIDELITY_FIELDS)
    if report.fidelity is None:
        return out
    out["fidelity_reference"] = report.fidelity.reference
    out["fidelity_unscored"] = (
        cell.fidelity.unscored if cell.fidelity else "the runner returned no scores"
    ) or None
    if f is not None:
        out.update(fidelity_tokens=f.tokens, fidelity_mean_abs_dlogp=f.mean_abs_dlogp,
                   fidelity_max_abs_dlogp=f.max_abs_dlogp, fidelity_first_diff=f.first_diff)  # fmt: skip
    return out


def to_csv(report: RunReport) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=ROW_FIELDS, lineterminator="\n")
    writer.writeheader()
    for row in flat_rows(report):
        writer.writerow({k: "" if v is None else v for k, v in row.items()})
    return buf.getvalue()


def to_jsonl(report: RunReport) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in flat_rows(report))
