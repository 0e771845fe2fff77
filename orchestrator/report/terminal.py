"""The comparison table for the terminal (rich)."""

from __future__ import annotations

from rich.table import Table

from .printers import _header, _mod_cell, _status_cell, modalities, visible_columns
from .types import RunReport


def device_table(report: RunReport) -> Table:
    cols = visible_columns(report.devices)
    mods = modalities(report)
    table = Table(title=f"edgefarm run {report.run_id}", title_justify="left")
    for c in cols:
        table.add_column(_header(c), justify="left" if c.field in ("device", "hardware", "soc", "backend") else "right")
    for m in mods:
        table.add_column(m.replace("_", " "), justify="right")
    table.add_column("Status")
    for r in report.devices:
        verdict_style = "green" if r.verdict.startswith("✓") else "red" if r.verdict else ""
        cells = [c.render(getattr(r, c.field)) for c in cols]
        if "pass_rate_pct" in [c.field for c in cols]:
            i = [c.field for c in cols].index("pass_rate_pct")
            cells[i] = f"[{verdict_style}]{cells[i]}[/]" if verdict_style else cells[i]
        status = _status_cell(r) if not r.error else f"[red]failed: {r.error.splitlines()[0][:60]}[/]"
        table.add_row(*cells, *[_mod_cell(r, m) for m in mods], status)
    return table
