"""The comparison tables for the terminal (rich): key figures per device, then pass by modality."""

from __future__ import annotations

from rich.console import Console, Group
from rich.table import Table

from .printers import _mod_cell, _status_cell, modalities
from .types import RunReport

TERMINAL_FIELDS = (
    "device",
    "backend",
    "samples",
    "pass_rate_pct",
    "init_ms",
    "ttft_ms_p50",
    "ttft_ms_p90",
    "prefill_tps_p50",
    "decode_tps_p50",
    "peak_rss_mb",
)


def _short_header(c) -> str:
    return f"{c.label}\n{c.unit}" if c.unit else c.label


def device_tables(report: RunReport) -> Group:
    from .types import COLUMNS

    cols = [c for c in COLUMNS if c.field in TERMINAL_FIELDS]
    table = Table(title=f"edgefarm run {report.run_id}", title_justify="left")
    for c in cols:
        table.add_column(_short_header(c), justify="left" if c.field in ("device", "backend") else "right")
    table.add_column("Status")
    for r in report.devices:
        cells = [c.render(getattr(r, c.field)) for c in cols]
        if r.verdict:
            i = [c.field for c in cols].index("pass_rate_pct")
            cells[i] = f"[{'green' if r.verdict.startswith('✓') else 'red'}]{cells[i]}[/]"
        status = _status_cell(r) if not r.error else f"[red]failed[/] ({_status_cell(r)})"
        table.add_row(*cells, status)
    parts = [table]
    mods = modalities(report)
    if mods:
        by_mod = Table(title="passed/scored by modality", title_justify="left")
        by_mod.add_column("Device")
        for m in mods:
            by_mod.add_column(m.replace("_", "\n"), justify="right")
        for r in report.devices:
            by_mod.add_row(r.device, *[_mod_cell(r, m) for m in mods])
        parts.append(by_mod)
    return Group(*parts)


def stdout_console() -> Console:
    """Wide enough for the tables when stdout is a file or a pipe (rich would assume 80 columns)."""
    console = Console()
    return console if console.is_terminal else Console(width=160)
