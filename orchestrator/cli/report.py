"""`edgefarm report RUN_DIR` and `edgefarm compare RUN_A RUN_B`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from ..errors import ConfigError, OutputError
from ..report.printers import PRINTERS
from ..report.terminal import stdout_console
from ..rundir import load_report


@click.command("report")
@click.argument(
    "run_dirs", nargs=-1, required=True, type=click.Path(path_type=Path, file_okay=False, exists=True)
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "html", "json", "csv", "jsonl", "term"]),
    default="md",
    show_default=True,
    help="csv / jsonl: one row per device and sample with every figure (for pandas or a spreadsheet)",
)
@click.option(
    "--merge",
    is_flag=True,
    help="combine runs made by several controllers (same model, dataset and selection) into one report",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="with --merge: also write report.json, report.md and report.html into this folder",
)
def report(run_dirs: tuple[Path, ...], fmt: str, merge: bool, out: Path | None) -> None:
    """Render a run folder's combined report to stdout (rebuilt from the device folders); with --merge,
    the runs of several controllers as one report."""
    if merge:
        from ..report.merge import merge_reports
        from ..rundir import write_reports

        combined = merge_reports([load_report(d) for d in run_dirs])
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            write_reports(out, combined)
    elif len(run_dirs) != 1 or out is not None:
        raise ConfigError(
            f"{len(run_dirs)} run folders without --merge"
            if len(run_dirs) != 1
            else "--out goes with --merge",
            where="edgefarm report",
            fix="pass one run folder, or --merge with every controller's run folder",
        )
    else:
        combined = load_report(run_dirs[0])
    text = PRINTERS.get(fmt)(combined)
    try:
        click.echo(text, nl=False)
        sys.stdout.flush()
    except OSError as e:  # stdout redirected to a full disk, a closed pipe, ...
        # What stays in stdout's buffer would fail again when Python flushes it at exit (exit 120 and a
        # second message): point the descriptor at /dev/null so only our error and exit code remain.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
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
