"""The comparison tables for the terminal (rich): key figures per device, pass by modality, and the
pair of devices that agree least. `to_text` is the `term` printer (the same tables as plain text)."""

from __future__ import annotations

import io

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from .printers import _mod_cell, _status_cell, modalities, worst_pair_text
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
        status += f" [yellow]stand-in: {r.stand_in}[/]" if r.stand_in else ""
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
    over = {r.figures_over for r in report.devices if r.figures_over}
    if over:  # --repeat / --warmup: say what TTFT and the speeds are distributions over
        parts.append(Text("figures over " + "; ".join(sorted(over))))
    worst = worst_pair_text(report)
    if worst:
        n = len(report.disagreements.samples)
        parts.append(Text(f"{worst} ({n} sample(s) disagree; see report.html#disagreements)", style="yellow"))
    errors = [f"{r.device} {r.scoring_errors}" for r in report.devices if r.scoring_errors]
    if errors:
        parts.append(
            Text("samples that could not be scored (counted as failed): " + ", ".join(errors), style="red")
        )
    return Group(*parts)


def to_text(report: RunReport, width: int = 160) -> str:
    """The terminal tables as plain text (no colour codes), for the `term` format and tests."""
    buf = io.StringIO()
    Console(file=buf, width=width, color_system=None, highlight=False).print(device_tables(report))
    return buf.getvalue()


def stdout_console() -> Console:
    """Wide enough for the tables when stdout is a file or a pipe (rich would assume 80 columns); no
    highlighting, which would colour the digits of run ids and paths."""
    console = Console(highlight=False)
    return console if console.is_terminal else Console(width=160, highlight=False)
