"""`edgefarm history [filters]` (trends per device and configuration) and `edgefarm history import
RUN_DIR...` (load run folders into the results database)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..errors import ConfigError, EdgefarmError, HistoryUnavailable
from ..history.db import ENV, opened, resolve
from ..history.judge import MIN_RUNS
from ..history.series import DEFAULT_LAST, DEFAULT_WINDOW, MAX_LAST, MAX_WINDOW
from ..history.store import MAX_WHY_CHARS
from ..printers import HISTORY, HISTORY_EXPORT, formats, printer
from ..report.compare_out import FAIL_ON
from .report import REGRESSION_EXIT

DB_HELP = f"the results database: a SQLite file, or postgresql://user@host:port/db (default: ${ENV}, else a file in the user's data folder)"


def db_option(f):
    return click.option("--db", "db", default=None, metavar="PATH|URL", help=DB_HELP)(f)


def filter_options(f):
    """--device, --model, --runtime, --backend, --shape: each repeatable, all combined."""
    for option in reversed((
        click.option("--device", "devices", multiple=True, help="only this device (repeatable)"),
        click.option("--model", "models", multiple=True, help="only this model: file name or sha256 (prefix)"),
        click.option("--runtime", "runtimes", multiple=True, help="only this runtime version or sha256 (prefix)"),
        click.option("--backend", "backends", multiple=True, help="only this backend (what ran: cpu, gpu, ...)"),
        click.option("--shape", "shapes", multiple=True,
                     help="only this shape (a run's: `12 samples`; a bench's: `bench -p 512 -n 128 -d 0 -r 5`)"),
    )):  # fmt: skip
        f = option(f)
    return f


def _filters(devices, models, runtimes, backends, shapes):
    from ..history.store import Filters

    return Filters(tuple(devices), tuple(models), tuple(runtimes), tuple(backends), tuple(shapes))


@click.group("history", invoke_without_command=True)
@db_option
@filter_options
@click.option("--format", "fmt", type=click.Choice(formats(HISTORY)), default="term", show_default=True,
              help="term: tables for a terminal; md: Markdown; csv: a row per device, run and figure; json: every field")  # fmt: skip
@click.option("--html", "html", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="also write a page of trend charts here, linking each run's report.html")  # fmt: skip
@click.option("--window", type=click.IntRange(MIN_RUNS, MAX_WINDOW), default=DEFAULT_WINDOW, show_default=True,
              help="judge each run against at most this many comparable runs before it; stability over the last this many")  # fmt: skip
@click.option("--last", type=click.IntRange(1, MAX_LAST), default=DEFAULT_LAST, show_default=True,
              help="show this many last runs per device and configuration")  # fmt: skip
@click.option("--fail-on", type=click.Choice(FAIL_ON), default="none", show_default=True,
              help=f"exit {REGRESSION_EXIT} when the latest run of a device and configuration shown is a change for "
              "the worse (regression) or either way (any); the changes on stderr")  # fmt: skip
@click.pass_context
def history(
    ctx: click.Context, db, devices, models, runtimes, backends, shapes, fmt, html, window, last, fail_on
) -> None:
    """Every recorded run: each device's figures over time, per configuration; each run judged against
    the spread between the comparable runs before it (changes, outliers, runs too few to judge); each
    figure's stability."""
    if ctx.invoked_subcommand:
        ctx.ensure_object(dict)["db"] = db
        return
    from ..fsutil import output_errors, write_text_atomic
    from ..history.html_page import render_page
    from ..history.series import build_series
    from ..history.store import excluded, read_history, read_samples
    from ..progress import stdout_console

    filters = _filters(devices, models, runtimes, backends, shapes)
    with opened(resolve(db), create=False) as store:
        rows = read_history(store, filters)
        series = build_series(rows, lambda run_id, device: read_samples(store, run_id, device), window, last,
                              excluded(store))  # fmt: skip
    chosen = printer(HISTORY, fmt)
    if chosen.terminal:
        chosen.draw()(series, stdout_console())
    else:
        click.echo(chosen.text()(series), nl=False)
    if html is not None:
        with output_errors(html):
            write_text_atomic(html, render_page(series))
        click.echo(f"trend charts: {html}", err=True)
    hits = [c for s in series for c in s.changes
            if c.run_id == s.points[-1].run_id and (fail_on == "any" or (fail_on == "regression" and c.worse))]  # fmt: skip
    if hits:
        for c in hits:
            click.echo(f"history --fail-on {fail_on}: {c.text()}", err=True)
        sys.exit(REGRESSION_EXIT)


@history.command("exclude")
@click.argument("run")
@click.option(
    "--why",
    default=None,
    metavar="TEXT",
    help=f"what disturbed it (at most {MAX_WHY_CHARS} characters); required unless --undo",
)
@click.option(
    "--device", default="", metavar="NAME", help="only this device of the run (default: every device)"
)
@click.option("--undo", is_flag=True, help="judge the run again")
@db_option
@click.pass_context
def exclude_run(
    ctx: click.Context, run: str, why: str | None, device: str, undo: bool, db: str | None
) -> None:
    """Exclude a run you know was disturbed (a CPU hog, a phone on a charger): `edgefarm history` still
    shows it, marked, but neither judges it nor judges later runs against it. RUN: its id or folder."""
    from datetime import datetime, timezone

    from ..history.store import Exclusion, exclude, include, run_devices

    run_id = Path(run).name if "/" in run else run
    if not undo and not (why or "").strip():
        raise ConfigError(
            "say why the run is excluded",
            where="--why",
            fix=f"edgefarm history exclude {run_id} --why 'a CPU hog ran beside it'",
        )
    if why is not None and len(why) > MAX_WHY_CHARS:
        raise ConfigError(
            f"--why is {len(why)} characters long (at most {MAX_WHY_CHARS})",
            where="--why",
            fix="say it shorter",
        )
    with opened(resolve(db or (ctx.obj or {}).get("db")), create=False) as store:
        known = run_devices(store, run_id)
        if not known:
            raise ConfigError(f"no run {run_id!r} in the results database", where=store.where,
                              fix="name a recorded run (`edgefarm history --format csv` lists them), or import its folder first")  # fmt: skip
        if device and device not in known:
            raise ConfigError(f"run {run_id} has no device {device!r} (it has {', '.join(known)})", where="--device",
                              fix="name one of the run's devices, or leave --device out for all of them")  # fmt: skip
        if undo:
            n = include(store, run_id, device)
            click.echo(
                f"{run_id}{f' on {device}' if device else ''}: "
                + ("judged again" if n else "was not excluded")
            )
            return
        exclude(
            store,
            Exclusion(run_id, device, why.strip(), datetime.now(timezone.utc).isoformat(timespec="seconds")),
        )
    click.echo(f"{run_id}{f' on {device}' if device else ''}: excluded ({why.strip()})")


@history.command("import")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path, exists=True))
@db_option
@click.pass_context
def import_runs(ctx: click.Context, paths: tuple[Path, ...], db: str | None) -> None:
    """Load run folders (or a folder of them, such as runs/) into the results database; a run already
    there unchanged is left as it is, a resumed one replaced."""
    from ..history.record import folder_entry, record, run_folders

    target = resolve(db or (ctx.obj or {}).get("db"))
    counts: dict[str, int] = {}
    failed = 0
    with opened(target) as store:
        for folder in run_folders(list(paths)):
            try:
                result = record(store, folder_entry(folder))
            except HistoryUnavailable:
                raise
            except EdgefarmError as e:  # a damaged run folder: say which, import the others
                failed += 1
                click.echo(f"{folder}: not imported: {e}", err=True)
                continue
            counts[result.status] = counts.get(result.status, 0) + 1
            for c in result.changes:
                click.echo(f"{folder.name}: {c.text()}", err=True)
    said = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "no runs"
    click.echo(f"{said}{f', {failed} not imported' if failed else ''} ({store.where})")
    if failed:
        raise SystemExit(2)


@history.command("export")
@click.option("--format", "fmt", type=click.Choice(formats(HISTORY_EXPORT)), required=True,
              help="llama-*: the recorded `edgefarm bench` rows in llama-bench's fields (its sql / jsonl); "
              "litert-*: each device's runs as rows of LiteRT-LM's benchmark table")  # fmt: skip
@db_option
@filter_options
@click.pass_context
def export(ctx: click.Context, fmt: str, db, devices, models, runtimes, backends, shapes) -> None:
    """The history in other tools' shapes (docs/history.md, "Export")."""
    from ..history import export as ex
    from ..history.store import read_bench_rows, read_history

    filters = _filters(devices, models, runtimes, backends, shapes)
    with opened(resolve(db or (ctx.obj or {}).get("db")), create=False) as store:
        if fmt.startswith("llama-"):  # llama-bench's shape: the recorded bench rows
            rows = read_bench_rows(store, filters)
        else:  # LiteRT-LM's table: each device's runs
            rows = ex.litert_rows(read_history(store, filters))
    text = printer(HISTORY_EXPORT, fmt).text()(rows)
    if not rows:
        click.echo(
            f"no {'bench rows' if fmt.startswith('llama-') else 'runs'} in the history match", err=True
        )
    click.echo(text, nl=False)
