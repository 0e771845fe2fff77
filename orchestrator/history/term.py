"""`edgefarm history` on a terminal (rich): a table per device and configuration, each figure with its
unit in the header and its mark coloured (render.py's MARKS, one legend), how many runs each row was
judged against, the stability and the changes after, printed on the console it is given."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from .render import (
    CONDITIONS_NOTE,
    MARKS,
    cell,
    condition_tags,
    config_text,
    header,
    judged_on,
    legend,
    shown_figures,
    stability_text,
)
from .types import Series

TERM_NOTE = (
    "Each figure is the run's own (a median over its samples where it has one; its interval over them: "
    "--format md or json); a mark judges the run against the spread between the comparable runs before "
    "it (docs/history.md):"
)
STYLES = {"worse": "bold red", "better": "bold green", "outlier": "yellow", "excluded": "dim"}


def _series(s: Series) -> Group:
    shown = shown_figures(s)
    table = Table(title=f"{s.device} ({s.hardware or 'unknown hardware'}): {config_text(s.config)}",
                  title_justify="left", header_style="bold")  # fmt: skip
    table.add_column("Run (its start)", no_wrap=True)  # a run id is its start time: no Started column
    table.add_column("Runtime")
    conditions = any(p.conditions for p in s.points)
    if conditions:
        table.add_column("Conditions", style="yellow")
    for f in shown:
        table.add_column(header(f), justify="right")
    table.add_column("Judged against", min_width=26)
    used: set[str] = set()
    for i, p in enumerate(s.points):
        row: list[Text | str] = [p.run_id, p.runtime_version or p.runtime_sha256[:12] or "?"]
        row += [condition_tags(p) or "–"] if conditions else []
        for f in shown:
            text, key = cell(s, i, f, interval=False)
            used.add(key)
            row.append(Text(f"{MARKS[key][0]} {text}", style=STYLES[key]) if key else Text(text))
        row.append(judged_on(s, i))
        table.add_row(*row)
    parts: list = [table, Text(TERM_NOTE, style="dim")]
    parts += [Text(x, style=STYLES[k]) for k in MARKS if k in used for x in legend({k})]
    parts += [Text(CONDITIONS_NOTE, style="yellow")] if conditions else []
    stab = [x for x in s.stability if x.figure in shown]
    if stab:
        parts.append(Text(f"Stability over the last {max(x.runs for x in stab)} runs: "
                          + "; ".join(stability_text(x) for x in stab)))  # fmt: skip
    for c in s.changes:
        parts.append(
            Text.from_markup(f"[{STYLES['worse' if c.worse else 'better']}]change:[/] {escape(c.text())}")
        )
    parts.append(Text(""))
    return Group(*parts)


def to_term(series: Sequence[Series], console: Console) -> None:
    if not series:
        console.print("No runs in the history match.")
        return
    for s in series:
        console.print(_series(s))
