"""`edgefarm report RUN_DIR` and `edgefarm compare RUN_A RUN_B`."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from ..errors import OutputError
from ..report.printers import PRINTERS
from ..report.terminal import stdout_console
from ..rundir import load_report


@click.command("report")
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "html", "json", "csv", "jsonl", "term"]),
    default="md",
    show_default=True,
    help="csv / jsonl: one row per device and sample with every figure (for pandas or a spreadsheet)",
)
def report(run_dir: Path, fmt: str) -> None:
    """Render a run folder's combined report to stdout (rebuilt from the device folders)."""
    text = PRINTERS.get(fmt)(load_report(run_dir))
    try:
        click.echo(text, nl=False)
        sys.stdout.flush()
    except OSError as e:  # stdout redirected to a full disk, a closed pipe, ...
        raise OutputError(
            f"cannot write the report to stdout: {e.strerror or e}",
            where="stdout",
            fix="redirect stdout to a file on a disk with room (`> report.md`)",
        ) from e


@click.command("compare")
@click.argument("run_a", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.argument("run_b", type=click.Path(path_type=Path, file_okay=False, exists=True))
def compare(run_a: Path, run_b: Path) -> None:
    """Compare two runs device by device (B against A) on the samples both ran; regressions first."""
    from ..report.compare import compare_runs, comparison_lines

    c = compare_runs(load_report(run_a), load_report(run_b))
    for w in c.warnings:
        click.echo(f"warning: {w}", err=True)
    table = Table(
        title=f"{c.run_a} → {c.run_b}: B − A over {c.common_samples} common sample(s)", title_justify="left"
    )
    table.add_column("Device")
    table.add_column("Samples", justify="right")
    for f in c.devices[0].figures if c.devices else ():
        table.add_column(f"{f.figure.label} ({f.figure.unit})", justify="right")
    for d in c.devices:
        cells = []
        for f in d.figures:
            text = f.text()
            if f.delta:
                cells.append(f"[{'red' if f.regression else 'green'}]{escape(text)}[/]")
            else:
                cells.append(escape(text))
        table.add_row(escape(d.device), str(d.common), *cells)
    console = stdout_console()
    console.print(table)
    for line in comparison_lines(c):
        console.print(line, markup=False, highlight=False)


COMMANDS = [report, compare]
