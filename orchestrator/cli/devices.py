"""`edgefarm devices`: what `--devices all` would use, with each device's info."""

from __future__ import annotations

import dataclasses
import json

import click
from rich.console import Console
from rich.table import Table

from ..inventory import load_inventory, select_devices
from .run import inventory_option


@click.command("devices")
@inventory_option
@click.option("--json", "as_json", is_flag=True, help="print JSON instead of a table")
def devices(inventory, as_json: bool) -> None:
    """List the devices `edgefarm run --devices all` would use, and those found but unusable."""
    inv = load_inventory(inventory)
    selection = select_devices(inv, "all")
    infos = [d.info() for d in selection.devices]
    if as_json:
        click.echo(json.dumps({
            "devices": [dataclasses.asdict(i) for i in infos],
            "unusable": [dataclasses.asdict(u) for u in selection.unusable],
            "adb_servers": [f"{h}:{p}" for h, p in inv.adb_servers],
            "notes": list(selection.notes),
        }, indent=2, ensure_ascii=False))
        return
    table = Table(title="devices (`--devices all`)", title_justify="left")
    for col in ("Name", "Kind", "Serial/host", "Hardware", "SoC", "ABI", "OS", "Cores", "RAM (MB)", "State"):
        table.add_column(col)
    for i in list(infos) + list(selection.unusable):
        hardware = " ".join(x for x in (i.manufacturer, i.model) if x) if i.kind != "local" else i.cpu
        state = i.state if not i.problem else f"[red]{i.state}[/]: {i.problem}"
        table.add_row(i.name, i.kind, i.serial, hardware, i.soc, i.abi, i.os, str(i.cores or ""),
                      f"{i.ram_mb:.0f}" if i.ram_mb else "", state)
    console = Console()
    console.print(table)
    for note in selection.notes:
        console.print(f"note: {note}")


COMMANDS = [devices]
