"""`edgefarm setup NAME|all`: prepare boards (isolated Python env, pinned runtime, runner)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from ..boards.setup import setup_board
from ..devices.kinds import KINDS
from ..devices.ssh import SshDevice
from ..errors import ConfigError, DeviceError
from ..inventory import load_inventory
from ..models import BUNDLED_MODEL
from ..progress import stderr_console, stdout_console
from .options import inventory_option

STATUS_STYLE = {"ok": "green", "warn": "yellow", "fail": "red"}


@click.command("setup")
@click.argument("names")
@inventory_option
@click.option(
    "--offline",
    is_flag=True,
    help="the board needs no internet: this host downloads the wheel for the board's platform and pushes it",
)
@click.option(
    "--wheels",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    show_default="$EDGEFARM_CACHE_DIR/wheels, else ~/.cache/edgefarm/wheels",
    help="host folder of downloaded wheels (--offline); a wheel already there is not downloaded again",
)
@click.option(
    "--model",
    type=click.Path(path_type=Path),
    default=BUNDLED_MODEL,
    show_default="bundled tiny model",
    help="the model you will run: free disk and RAM are judged against its size",
)
@click.option("--json", "as_json", is_flag=True, help="print the result as JSON")
def setup(names: str, inventory, offline: bool, wheels: Path | None, model: Path, as_json: bool) -> None:
    """Prepare boards: a Python env in the board's work folder with litert-lm-api, and the runner.

    NAMES is `all` or board names from devices.yaml (kind: ssh), comma-separated."""
    inv = load_inventory(inventory)
    boards = {e["name"]: e for e in inv.entries if KINDS.get(e["kind"]).board and not e.get("disabled")}
    others = {e["name"]: e["kind"] for e in inv.entries if not KINDS.get(e["kind"]).board}
    wanted = list(boards) if names == "all" else [n.strip() for n in names.split(",") if n.strip()]
    if not wanted:
        raise ConfigError(
            "no board to set up" + (f" in {inv.path}" if inv.path else ""),
            where="--inventory",
            fix="declare boards (kind: ssh) in devices.yaml and pass it with --inventory",
        )
    for n in wanted:
        if n not in boards:
            what = f"{n} is a {others[n]} device, setup prepares boards" if n in others else f"no board {n!r}"
            raise ConfigError(
                what, where="NAMES", fix=f"pass `all` or one of: {', '.join(sorted(boards)) or '(none)'}"
            )
    model = Path(model).expanduser()
    if not model.is_file():
        raise ConfigError(f"model file not found: {model}", where="--model", fix="pass --model PATH")
    err = stderr_console()  # not a terminal: never wraps, so a fix command pastes whole
    results, failed = [], []
    for n in wanted:
        dev = SshDevice.from_entry(boards[n])
        try:
            res = setup_board(
                dev,
                model.stat().st_size,
                offline=offline,
                wheels=wheels,
                log=lambda msg, n=n: err.print(f"[dim]{n}:[/] {msg}"),
            )
        except DeviceError as e:
            failed.append(n)
            err.print(f"[red]error:[/] {escape(str(e))}")
            results.append({"name": n, "error": str(e)})
            continue
        finally:
            dev.close()
        results.append(res.as_dict())
        if not as_json:
            _print(res, stdout_console())
    if as_json:
        click.echo(json.dumps({"boards": results}, indent=2, ensure_ascii=False))
    if failed:
        sys.exit(DeviceError.exit_code)


def _print(res, console) -> None:
    table = Table(title=f"{res.name}: setup verdict", title_justify="left")
    for col in ("check", "found", "needs", "status"):
        table.add_column(col)
    for c in res.verdict.checks:
        style = STATUS_STYLE[c.status]
        table.add_row(c.name, c.found, c.need, f"[{style}]{c.status}[/]" + (f" ({c.fix})" if c.fix else ""))
    console.print(table)
    d = res.as_dict()
    console.print(
        f"{res.name} ready ({res.mode}): {d['abi']}, Python {d['python_version']} at {d['python']}, "
        f"{d['libc']}, litert-lm-api {d['litert_lm_version']}, in {d['seconds']:.1f} s"
    )
