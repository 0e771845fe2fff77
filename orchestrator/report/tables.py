"""Flat exports for pandas and spreadsheets: one row per device and sample, every figure.

`edgefarm report RUN --format csv` / `--format jsonl`. Columns are declared once (ROW_FIELDS): the
run and device identity, then the sample, then every SampleCell field."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any

from .types import SAMPLE_FIELDS, RunReport

ROW_FIELDS = (
    ("run_id", "device", "hardware", "soc", "device_backend", "sample_id", "modality", "task")
    + SAMPLE_FIELDS
    + ("reference",)
)


def flat_rows(report: RunReport) -> Iterator[dict[str, Any]]:
    devices = {r.device: r for r in report.devices}
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
            yield row


def to_csv(report: RunReport) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=ROW_FIELDS, lineterminator="\n")
    writer.writeheader()
    for row in flat_rows(report):
        writer.writerow({k: "" if v is None else v for k, v in row.items()})
    return buf.getvalue()


def to_jsonl(report: RunReport) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in flat_rows(report))
