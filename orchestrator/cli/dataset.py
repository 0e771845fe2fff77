"""`edgefarm dataset check D`: validate a dataset in any registered format and count its samples."""

from __future__ import annotations

import json
import sys

import click
from rich.console import Console
from rich.table import Table

from ..datasets import Dataset, load_dataset
from ..errors import EdgefarmError


@click.group()
def dataset() -> None:
    """Inspect evaluation datasets."""


@dataset.command()
@click.argument("path")
@click.option("--format", "format_", metavar="F", help="Dataset format (default: detected).")
@click.option("--subset", metavar="S", help="Subset / split to read (EdgeMMEval: the data/<split> folder).")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='Print {"total", "by_modality", "errors"} as JSON (and "warnings" when any).',
)
def check(path: str, format_: str | None, subset: str | None, as_json: bool) -> None:
    """Validate PATH (a folder, a rows file, or a hub id); exit 0 only when it has no problems.

    Every problem is listed with file:line, test id and field. Exit status 2 when there are any.
    Warnings (a regex known to backtrack) are listed too and do not change the exit status.
    """
    from ..datasets.patterns import pattern_warnings

    try:
        ds = load_dataset(path, format=format_, subset=subset)
    except EdgefarmError as e:
        if not as_json:
            raise  # the group prints it once, with its fix, and exits with its code
        click.echo(json.dumps({"total": 0, "by_modality": {}, "errors": [str(e)]}, ensure_ascii=False))
        sys.exit(e.exit_code)
    if as_json:
        summary = {
            "total": len(ds.samples),
            "by_modality": ds.by_modality,
            "errors": [str(p) for p in ds.problems],
        }
        warnings = pattern_warnings(ds)
        if warnings:  # only then: a clean dataset's summary keeps its three keys
            summary["warnings"] = [str(w) for w in warnings]
        click.echo(json.dumps(summary, ensure_ascii=False))
    else:
        _print_summary(ds, pattern_warnings(ds))
    sys.exit(2 if ds.problems else 0)


def _print_summary(ds: Dataset, warnings: list) -> None:
    """Rich table of samples per modality, then every problem (plain text: messages hold brackets)."""
    console = Console(soft_wrap=True)
    table = Table(title=f"{ds.name} ({ds.format}) {ds.root}", title_justify="left")
    table.add_column("modality")
    table.add_column("samples", justify="right")
    for modality, count in ds.by_modality.items():
        table.add_row(modality, str(count))
    table.add_row("total", str(len(ds.samples)), style="bold", end_section=True)
    console.print(table)
    for problem in ds.problems:
        click.echo(f"  - {problem}")
    for warning in warnings:
        click.echo(f"  warning: {warning}")
    if ds.problems:
        click.echo(f"{len(ds.problems)} problem(s); rows with problems are not counted above.")
    else:
        click.echo(f"OK: {len(ds.samples)} samples, no problems.")
