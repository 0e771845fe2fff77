"""The comparison tables for the terminal (rich): key figures per device, pass by modality, and the
pair of devices that agree least. `to_text` is the `term` printer (the same tables as plain text)."""

from __future__ import annotations

import io

from rich.cells import cell_len
from rich.console import Console, Group
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from .. import sustain
from ..progress import stdout_console
from ..telemetry.conditions import RunConditions
from .best import BEST, TIED
from .cells import BEST_NOTE, SETTINGS, Cell, device_table, header, mod_cell, modalities, shared_settings
from .conditions import conditions_lines
from .facts import (
    INTERVALS_NOTE,
    card_only_lines,
    conditions_problems,
    conditions_text,
    paired_lines,
    run_conditions,
    sharing_text,
    worst_pair_text,
)
from .fidelity_views import fidelity_table, worst_table
from .matrix_views import flip_lines, matrix_table, not_run_lines
from .types.device_row import COLUMNS
from .types.run_report import RunReport


def _fitted(
    headers: list[str], rows: list[list[Cell]], title: str, width: int, settings: frozenset[int] = frozenset()
) -> tuple[Table, list[int]]:
    """The table with as many columns as fit `width` with one line per device (never a wrapped number or
    cell): columns are dropped from the right, the `settings` columns (what differs between the devices:
    often the very setting being compared) only after every figure, the status last and the device
    never; returns the dropped columns' indexes."""
    keep = list(range(len(headers)))
    status = len(headers) - 1
    while True:
        table = Table(title=title, title_justify="left")
        for i in keep:
            if i == status:  # may wrap at its spaces when tight: then a column more is dropped
                table.add_column(headers[i], min_width=min(16, max(len(r[i].value) for r in rows)))
            else:
                text = i == 0 or not _unit(headers[i])  # a name, hardware, SoC: left; figures right
                table.add_column(_stacked(headers[i]), justify="left" if text else "right", no_wrap=True)
        for row in rows:
            table.add_row(*[_cell(row[i]) for i in keep])
        fits = _one_line_per_row(table, len(rows), width)
        if fits or len(keep) <= 2:
            return table, [i for i in range(len(headers)) if i not in keep]
        droppable = [i for i in reversed(keep) if i not in (0, status)]
        drop = next((i for i in droppable if i not in settings), droppable[0] if droppable else status)
        keep.remove(drop)


def _one_line_per_row(table: Table, rows: int, width: int) -> bool:
    """Rendered `width` columns wide, the table keeps every row on one line (no cell wrapped, no line
    longer than the terminal) and no cell is cut: measured by rendering it, as the terminal will, not
    predicted. A table wider than the terminal is crushed by rich, its no-wrap cells cut to `Pa…`
    (still one line each), so its natural width must fit too."""
    console = Console(width=width, file=io.StringIO(), color_system=None, legacy_windows=False)
    if Measurement.get(console, console.options.update_width(10_000), table).maximum > width:
        return False
    with console.capture() as captured:
        console.print(table)
    lines = captured.get().splitlines()
    body = lines[next((i for i, x in enumerate(lines) if x.startswith("┡")), len(lines)) + 1 :]
    body = body[: next((i for i, x in enumerate(body) if x.startswith("└")), len(body))]
    return len(body) == rows and all(cell_len(x) <= width for x in lines)


def _plain(c: Cell) -> str:
    return f"{c.value} ★" if c.mark == BEST else f"{c.value} tied" if c.mark == TIED else c.value


def _stacked(header: str) -> str:
    """A header on as many lines as it has parts: `TTFT p50` over `(ms)`; `Speed-up` over `vs a`."""
    return header.replace(" vs ", "\nvs ").replace(" (", "\n(")


def _cell(c: Cell) -> str:
    return f"[bold]{escape(_plain(c))}[/]" if c.mark == BEST else escape(_plain(c))


def device_tables(report: RunReport, width: int = 160, wide: bool = False) -> Group:
    """The "which device?" table fitted to `width` columns (★ best, tied; the decisive figures, then
    what else fits; `wide`: every column), each device's 95% intervals and any column that did not
    fit on lines under it; pass by modality, the paired comparison against the baseline, the
    card-only passes and the least agreeing pair."""
    headers, rows = device_table(report, wide=wide)
    setting_headers = {header(c) for c in COLUMNS if c.field in SETTINGS}
    settings = frozenset(i for i, h in enumerate(headers) if h in setting_headers)
    table, dropped = _fitted(headers, rows, f"edgefarm run {report.run_id}", width, settings)
    shared = shared_settings(report)
    parts: list = [table]
    if shared:
        parts.append(Text("same on every device: " + " · ".join(t for _, t in shared)))
    parts.append(Text(BEST_NOTE, style="dim"))
    for r, row in zip(report.devices, rows, strict=True):  # intervals (and columns that did not fit)
        cis = [f"{_label(headers[i])} {row[i].interval}" for i in range(1, len(row)) if row[i].interval
               and row[i].interval != "(baseline)" and i not in dropped]  # fmt: skip
        more = [_dropped(headers[i], row[i]) for i in dropped if row[i].value not in ("", "–")]
        if cis or more:
            text = (
                (f"95%: {' · '.join(cis)}" if cis else "") + ("; " if cis and more else "") + "; ".join(more)
            )
            parts.append(Text(f"{r.device}: {text}"))
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
    if over and "figures_over" not in {f for f, _ in shared}:  # --repeat / --warmup, unless said above
        parts.append(Text("figures over " + "; ".join(sorted(over))))
    for name, c in report.sustain.items():  # --sustain: time to the first throttle, steady state
        parts.append(Text(sustain.summary(name, c)))
    sharing = sharing_text(report)
    if sharing:
        parts.append(Text(f"CPU sharing: {sharing}", style="yellow"))
    parts += conditions_parts(run_conditions(report))  # what moves figures between runs
    for line in paired_lines(report):
        parts.append(Text(line))
    parts += matrix_parts(report)  # a run of several backends per device
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
    for g in report.units:  # --units: the outliers (report.html has the table)
        for line in g.outliers or (f"units of {g.name}: no unit stands out",):
            parts.append(Text(line, style="yellow" if g.outliers else ""))
    for line in conditions_lines(report):
        parts.append(Text(line, style="yellow" if "NOT settled" in line else ""))
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


def conditions_parts(conditions: RunConditions | None) -> list[Text]:
    """The conditions a run or a bench ran under (telemetry/conditions.py), then what was bad during it by
    the rules, in yellow: under a run's tables and at a bench's end (cli/bench.py)."""
    text = conditions_text(conditions)
    parts = [Text(f"conditions: {text}")] if text else []
    return parts + [Text(line, style="yellow") for line in conditions_problems(conditions)]


def matrix_parts(report: RunReport) -> list:
    """The backend matrix (report/matrix_views.py's lines), its flagged flips and the cells that did not run."""
    fig = matrix_table(report)
    if fig is None:
        return []
    t = Table(title=fig.title, title_justify="left")
    for h in fig.headers:
        t.add_column(h, no_wrap=True)
    for row in fig.rows:
        t.add_row(*(escape(c) for c in row))
    parts: list = [t, Text(fig.note, style="dim")]
    parts += [Text(x, style="red") for x in flip_lines(report.matrix)]
    parts += [Text(x, style="yellow") for x in not_run_lines(report.matrix)]
    return parts


def _dropped(header: str, c: Cell) -> str:
    """A column that did not fit, as a phrase: `Peak RSS 91 MB`, `Speed-up vs a 0.70 x (0.43–1.02) tied`."""
    return " ".join(
        x for x in (_label(header), c.value + _unit(header), c.interval, _plain(c)[len(c.value) + 1 :]) if x
    )


def _unit(h: str) -> str:
    """` ms` for a header `TTFT p50 (ms)`; '' without a unit."""
    return " " + h.rsplit(" (", 1)[1][:-1] if h.endswith(")") and " (" in h else ""


def _label(h: str) -> str:
    """A header without its unit: `TTFT p50 (ms)` -> `TTFT p50`."""
    return h.rsplit(" (", 1)[0] if h.endswith(")") else h


def to_text(report: RunReport, width: int = 160, wide: bool = False) -> str:
    """The terminal tables as plain text (no colour codes), for the `term` format and tests."""
    buf = io.StringIO()
    Console(file=buf, width=width, color_system=None, highlight=False).print(
        device_tables(report, width, wide)
    )
    return buf.getvalue()


def print_tables(report: RunReport, wide: bool = False) -> None:
    """The tables on stdout, fitted to the terminal's width (160 columns for a file or a pipe)."""
    console = stdout_console()
    console.print(device_tables(report, console.width, wide))
