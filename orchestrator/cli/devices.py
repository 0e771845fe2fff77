"""`edgefarm devices`: what `--devices all` would use, with each device's info."""

from __future__ import annotations

import dataclasses
import json

import click
from rich.table import Table

from ..inventory import load_inventory, select_usable
from ..report.terminal import stdout_console
from .run import inventory_option


@click.command("devices")
@inventory_option
@click.option("--json", "as_json", is_flag=True, help="print JSON instead of a table")
def devices(inventory, as_json: bool) -> None:
    """List the devices `edgefarm run --devices all` would use, and those found but unusable."""
    inv = load_inventory(inventory)
    selection = select_usable(inv, "all")  # the same rule `run --devices all` uses
    infos = list(selection.infos)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "devices": [dataclasses.asdict(i) for i in infos],
                    "unusable": [dataclasses.asdict(u) for u in selection.unusable],
                    "adb_servers": [f"{h}:{p}" for h, p in inv.adb_servers],
                    "notes": list(selection.notes),
                },
                indent=2,
                ensure_ascii=False,
            )
        )
        return
    console = stdout_console()
    rows = []
    for i in list(infos) + list(selection.unusable):
        hardware = " ".join(x for x in (i.manufacturer, i.model) if x) if i.kind != "local" else i.cpu
        rows.append(
            {
                "Name": i.name,
                "Kind": i.kind,
                "Serial/host": i.serial,
                "Hardware": hardware,
                "SoC": i.soc,
                "ABI": i.abi,
                "OS": i.os,
                "Cores": str(i.cores or ""),
                "RAM MB": f"{i.ram_mb:.0f}" if i.ram_mb else "",
                "State": i.state if i.state == "device" else f"[red]{i.state}[/]",
            }
        )
    table = Table(title="devices (`--devices all`)", title_justify="left")
    columns = [c for c in rows[0] if any(r[c] for r in rows)] if rows else []
    for col in columns:
        table.add_column(col)
    for r in rows:
        table.add_row(*(r[c] for c in columns))
    console.print(table)
    for u in selection.unusable:
        console.print(f"[red]{u.name}[/] ({u.state}): {u.problem}")
    for note in selection.notes:
        console.print(f"note: {note}")


COMMANDS = [devices]
