"""`edgefarm report RUN_DIR` and `edgefarm compare RUN_A RUN_B`."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.table import Table

from ..errors import OutputError
from ..report.printers import PRINTERS
from ..report.terminal import stdout_console
from ..report.types import DeviceRow
from ..rundir import load_report

COMPARED = (
    ("pass_rate_pct", "Pass %", True),
    ("ttft_ms_p50", "TTFT p50 ms", False),
    ("prefill_tps_p50", "Prefill tok/s", True),
    ("decode_tps_p50", "Decode tok/s", True),
    ("init_ms", "Init ms", False),
    ("peak_rss_mb", "Peak RSS MB", False),
)


@click.command("report")
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--format", "fmt", type=click.Choice(["md", "html", "json"]), default="md", show_default=True)
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


def _delta(a: float | None, b: float | None) -> str:
    if a is None or b is None:
        return "–"
    if a == 0:
        return f"{b - a:+.2f}"
    return f"{(b - a) / abs(a) * 100:+.1f}%"


@click.command("compare")
@click.argument("run_a", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.argument("run_b", type=click.Path(path_type=Path, file_okay=False, exists=True))
def compare(run_a: Path, run_b: Path) -> None:
    """Compare two runs device by device (B relative to A)."""
    a, b = load_report(run_a), load_report(run_b)
    rows_a: dict[str, DeviceRow] = {r.device: r for r in a.devices}
    rows_b: dict[str, DeviceRow] = {r.device: r for r in b.devices}
    table = Table(title=f"{a.run_id} -> {b.run_id}", title_justify="left")
    table.add_column("Device")
    for _, label, _ in COMPARED:
        table.add_column(label, justify="right")
    for name in list(rows_a) + [n for n in rows_b if n not in rows_a]:
        ra, rb = rows_a.get(name), rows_b.get(name)
        cells = []
        for field, _, higher_better in COMPARED:
            va, vb = getattr(ra, field, None) if ra else None, getattr(rb, field, None) if rb else None
            text = f"{va if va is not None else '–'} -> {vb if vb is not None else '–'} ({_delta(va, vb)})"
            if va is not None and vb is not None and va != vb:
                good = (vb > va) == higher_better
                text = f"[{'green' if good else 'red'}]{text}[/]"
            cells.append(text)
        table.add_row(name, *cells)
    stdout_console().print(table)


COMMANDS = [report, compare]
