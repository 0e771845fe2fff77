"""The comparison tables for the terminal (rich): key figures per device, pass by modality, and the
pair of devices that agree least. `to_text` is the `term` printer (the same tables as plain text)."""

from __future__ import annotations

import io

from rich.console import Console, Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from .cells import TERMINAL_FIELDS, device_table, mod_cell, modalities, shared_settings
from .facts import INTERVALS_NOTE, card_only_lines, paired_lines, sharing_text, worst_pair_text
from .fidelity_views import fidelity_table, worst_table
from .types import RunReport


def device_tables(report: RunReport) -> Group:
    """The "which device?" table (★ best per column, 95% intervals), pass by modality, the paired
    comparison against the baseline, the card-only passes and the least agreeing pair."""
    headers, rows = device_table(report, TERMINAL_FIELDS)
    table = Table(title=f"edgefarm run {report.run_id}", title_justify="left")
    for i, h in enumerate(headers):
        table.add_column(h, justify="left" if i == 0 else "right", overflow="fold")
    for r, row in zip(report.devices, rows, strict=True):
        cells = [f"[bold]{escape(c.text)} ★[/]" if c.best else escape(c.text) for c in row]
        if r.error:
            cells[-1] = f"[red]{cells[-1]}[/]"
        table.add_row(*cells)
    shared = shared_settings(report)
    parts: list = [table]
    if shared:
        parts.append(Text("same on every device: " + " · ".join(t for _, t in shared)))
    for r in report.devices:  # a board ran this phone's missing samples (or this board ran a phone's)
        if r.stand_in:
            parts.append(Text(f"{r.device}: stand-in: {r.stand_in}", style="yellow"))
    parts.append(Text(INTERVALS_NOTE, style="dim"))
    mods = modalities(report)
    if mods:
        by_mod = Table(title="passed/scored by modality", title_justify="left")
        by_mod.add_column("Device")
        for m in mods:
            by_mod.add_column(m.replace("_", "\n"), justify="right")
        for r in report.devices:
            by_mod.add_row(r.device, *[mod_cell(r, m) for m in mods])
        parts.append(by_mod)
    over = {r.figures_over for r in report.devices if r.figures_over}
    if over:  # --repeat / --warmup: say what TTFT and the speeds are distributions over
        parts.append(Text("figures over " + "; ".join(sorted(over))))
    sharing = sharing_text(report)
    if sharing:
        parts.append(Text(f"CPU sharing: {sharing}", style="yellow"))
    for line in paired_lines(report):
        parts.append(Text(line))
    for fig in (fidelity_table(report), worst_table(report)):  # --fidelity runs only
        if fig is not None:
            t = Table(title=fig.title, title_justify="left")
            for i, h in enumerate(fig.headers):
                t.add_column(h, justify="left" if i == 0 else "right", overflow="fold")
            for row in fig.rows:
                t.add_row(*(escape(c) for c in row))
            parts.append(t)
            if fig.note:
                parts.append(Text(fig.note, style="dim"))
    for line in card_only_lines(report):
        parts.append(Text(line[:300] + ("…" if len(line) > 300 else ""), style="yellow"))
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
