"""`edgefarm report RUN_DIR` and `edgefarm compare RUN_A RUN_B`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from ..errors import ConfigError, OutputError
from ..printers import COMPARISON, REPORT, formats, printer
from ..progress import stdout_console
from ..report.build import load_report
from ..report.compare_out import DRIFT_NOTE, FAIL_ON, columns, found


@click.command("report")
@click.argument(
    "run_dirs", nargs=-1, required=True, type=click.Path(path_type=Path, file_okay=False, exists=True)
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(formats(REPORT)),
    default="md",
    show_default=True,
    help="csv / jsonl: one row per device and sample with every figure (for pandas or a spreadsheet); trace: "
    "the run as a Chrome/Perfetto trace (ui.perfetto.dev)",
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
@click.option("--baseline", default="", help="the device the others are compared with (default: the first)")
@click.option(
    "--reference",
    default="",
    metavar="DEVICE",
    help="--fidelity runs: the device the others' arithmetic is measured against (default: the run's)",
)
@click.option(
    "--allow-different",
    is_flag=True,
    help="with --merge: merge runs whose token cap, backend, threads, runner or repeat differ (named in the report)",
)
@click.option(
    "--wide",
    is_flag=True,
    help="with --format term: every column of the device table (default: the decisive figures, then what "
    "fits the terminal; the rest on lines under it)",
)
def report(
    run_dirs: tuple[Path, ...],
    fmt: str,
    merge: bool,
    out: Path | None,
    baseline: str,
    reference: str,
    allow_different: bool,
    wide: bool,
) -> None:
    """Render a run folder's combined report to stdout (rebuilt from the device folders); with --merge,
    the runs of several controllers as one report."""
    if wide and fmt != "term":
        raise ConfigError(f"--wide is for the terminal table, not --format {fmt}", where="--wide",
                          fix="add --format term, or leave --wide out (report.md has every column)")  # fmt: skip
    if merge:
        from ..report.build import write_reports
        from ..report.merge import merge_reports

        merged = merge_reports([load_report(d) for d in run_dirs], allow_different)
        combined = with_reference(with_baseline(merged, baseline), reference)
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
        from ..report.media import with_samples

        combined = with_reference(with_baseline(load_report(run_dirs[0]), baseline), reference)
        combined = with_samples(combined, run_dirs[0], write=False)
    shown = printer(REPORT, fmt)
    if shown.terminal:
        shown.draw()(combined, wide)
        return
    if fmt == "html":  # written elsewhere than the run folder: its links to media and files absolute
        text = shown.text()(combined, (out or run_dirs[0]).resolve().as_uri() + "/")
    else:
        text = shown.text()(combined)
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


REGRESSION_EXIT = 8  # compare --fail-on found what it fails on (1-7 are errors.py's)


@click.command("compare")
@click.argument("run_a", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.argument("run_b", type=click.Path(path_type=Path, file_okay=False, exists=True), required=False)
@click.option(
    "--allow-different",
    is_flag=True,
    help="compare runs whose model, dataset slice or settings (token cap, backend, threads, runner, repeat, "
    "warmup, sustain, ...) differ",
)
@click.option("--baseline", type=click.Choice(["last"]), default=None,
              help="last: compare the one run given (as B) against the last comparable run before it in the "
              "results database (docs/history.md)")  # fmt: skip
@click.option("--db", default=None, metavar="PATH|URL", help="with --baseline last: the results database")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(formats(COMPARISON)),
    default="term",
    show_default=True,
    help="json / csv: every device's flips and paired ratios with their intervals, for CI and pandas",
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    default="none",
    show_default=True,
    help=f"exit {REGRESSION_EXIT} when B is significantly worse than A on a device (regression: verdicts "
    "flipped to fail, or a figure moved the wrong way) or differs at all (any); the changes on stderr",
)
def compare(
    run_a: Path, run_b: Path | None, allow_different: bool, baseline: str | None, db: str | None, fmt: str,
    fail_on: str,
) -> None:  # fmt: skip
    """Compare two runs device by device (B against A) on the same samples: verdict flips with an exact
    McNemar test, figures as paired ratios B/A with 95% intervals; significant changes for the worse first.
    `compare --baseline last RUN`: A is the last comparable run before RUN in the results database.
    Exit 0, or 8 with --fail-on when it found what it fails on (2: refused)."""
    from ..report.compare import compare_runs

    if baseline == "last":
        if run_b is not None:
            raise click.UsageError("--baseline last compares ONE run with the history: give one run folder")
        from ..history.db import opened, resolve
        from ..history.record import last_comparable_run

        with opened(resolve(db)) as store:
            run_a, run_b = last_comparable_run(store, run_a), run_a
        click.echo(f"baseline: the last comparable run, {run_a}", err=True)
    elif run_b is None:
        raise click.UsageError("give two run folders (RUN_A RUN_B), or one with --baseline last")

    if run_a.resolve() == run_b.resolve():  # a run against itself: 1.00 everywhere, nothing told
        raise ConfigError(
            f"A and B are the same folder ({run_a}): a run compared with itself tells nothing",
            where=f"edgefarm compare {run_a} {run_b}",
            fix="compare two different runs (re-run with the same flags for B), or measure A and B "
            "interleaved with `edgefarm ab`",
        )
    if (run_a / "bench.json").is_file() or (run_b / "bench.json").is_file():  # two bench runs: cell by cell
        if fmt != "term" or fail_on != "none":
            raise ConfigError("--format and --fail-on are for runs of `edgefarm run`, not bench runs",
                              where="edgefarm compare", fix="leave them out to compare two bench runs")  # fmt: skip
        click.echo(bench_comparison(run_a, run_b), nl=False)
        return
    c = compare_runs(load_report(run_a), load_report(run_b), allow_different, (str(run_a), str(run_b)))
    print_comparison(c, fmt, fail_on, DRIFT_NOTE, "compare")


def print_comparison(
    c, fmt: str, fail_on: str, note: str, command: str, interval: str = "95% interval"
) -> None:
    """A Comparison on stdout in `fmt` with `note` (under the table; json/md carry it); then the
    --fail-on gate: exit REGRESSION_EXIT naming what it found on stderr. `interval`: what the ratios'
    brackets are, for the table's and Markdown's title."""
    shown = printer(COMPARISON, fmt)
    if shown.terminal:
        shown.draw()(c, note, interval)
    else:
        click.echo(shown.text()(c, note, interval), nl=False)
    hits = found(c, fail_on)
    if hits:
        how = "worse" if fail_on == "regression" else "different"
        click.echo(f"{command} --fail-on {fail_on}: B is significantly {how} on {len(hits)} device(s): "
                   + "; ".join(hits), err=True)  # fmt: skip
        sys.exit(REGRESSION_EXIT)


def compare_table(c, note: str, interval: str) -> None:
    """A Comparison as a table on the terminal (the `term` format of compare and ab), its flips and
    `note` under it."""
    from ..report.compare import comparison_lines

    lines = comparison_lines(c)
    title = (
        f"{c.run_a} → {c.run_b}: B against A on {c.common_samples} common sample(s), ratios B/A ({interval})"
    )
    if c.settings:
        title += "\nsame in both runs: " + "; ".join(c.settings)
    if c.differences:
        title += "\nDIFFERENT SETTINGS (compared anyway): " + "; ".join(c.differences)
    if c.versions:
        title += "\nVERSIONS DIFFER: " + "; ".join(c.versions)
    if c.conditions:
        title += "\nCONDITIONS: " + "; ".join(c.conditions)
    table = Table(title=escape(title), title_justify="left")
    shown = columns(c)  # the catalogue's paired measures some device has
    table.add_column("Device")
    table.add_column("Samples", justify="right")
    table.add_column("Pass (%)", justify="right")
    for _, label in shown:
        table.add_column(label, justify="right")
    for d in c.devices:
        cells = [d.pass_text()] + [d.figure_text(f) for f, _ in shown]
        styled = [escape(x) if "no significant" in x or x == "–" else f"[bold]{escape(x)}[/]" for x in cells]
        table.add_row(escape(d.device), str(d.common), *styled)
    console = stdout_console()
    console.print(table)
    for line in lines:
        console.print(line, markup=False, highlight=False)
    console.print(note, markup=False, highlight=False, style="dim")


def bench_comparison(run_a: Path, run_b: Path) -> str:
    """Two `edgefarm bench` runs compared cell by cell (bench/compare.py); a bench run against a
    dataset run is refused."""
    from ..bench.compare import compare_bench, comparison_text
    from ..farm.rundir import read_run_record
    from ..jsonio import DOCUMENT, read_json
    from ..telemetry.conditions import findings

    docs = []
    for run in (run_a, run_b):
        if not (run / "bench.json").is_file():
            raise ConfigError("one run is a bench run and the other is not", where=str(run),
                              fix="compare two `edgefarm bench` runs, or two `edgefarm run` runs")  # fmt: skip
        docs.append(
            read_json(run / "bench.json", DOCUMENT, error=ConfigError, fix="pass a finished bench run folder")
        )
    text = comparison_text(compare_bench(docs[0], docs[1], (str(run_a), str(run_b))))
    runs = [read_run_record(run) for run in (run_a, run_b)]  # their conditions (telemetry/conditions.py)
    said = findings(runs[0].conditions, runs[1].conditions, [r.run_id for r in runs])
    return text + ("CONDITIONS: " + "; ".join(said) + "\n" if said else "")


def with_baseline(report, name: str):
    """The report compared against device `name` (--baseline); the first device without one."""
    if not name:
        return report
    from dataclasses import replace

    from ..report.paired import against_baseline

    names = [r.device for r in report.devices]
    if name not in names:
        raise ConfigError(f"no device {name!r} in run {report.run_id}", where="--baseline",
                          fix=f"name one of the run's devices: {', '.join(names)}")  # fmt: skip
    return replace(report, baseline=name, paired=against_baseline(report.samples, names, name))


def with_reference(report, name: str):
    """The report's fidelity measured against device `name` (--reference); as recorded without one."""
    if not name:
        return report
    from dataclasses import replace

    from ..report.fidelity import fidelity_report

    names = [r.device for r in report.devices]
    if name not in names:
        raise ConfigError(f"no device {name!r} in run {report.run_id}", where="--reference",
                          fix=f"name one of the run's devices: {', '.join(names)}")  # fmt: skip
    if report.fidelity is None:
        raise ConfigError(f"run {report.run_id} has no fidelity scores", where="--reference",
                          fix="run with `edgefarm run --fidelity` (or leave --reference out)")  # fmt: skip
    return replace(report, fidelity=fidelity_report(report.devices, report.samples, name))
