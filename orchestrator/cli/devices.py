"""`edgefarm devices`: what `--devices all` would use, with each device's info."""

from __future__ import annotations

import dataclasses
import json

import click
from rich.table import Table

from ..cluster.probe import require_head
from ..cluster.types import flat_listing
from ..devices.kinds import kind_spec
from ..inventory import load_inventory, select_usable
from ..progress import stdout_console
from .options import cluster_option, inventory_option


@click.command("devices")
@inventory_option
@click.option("--json", "as_json", is_flag=True, help="print JSON instead of a table")
@cluster_option("a Ray cluster's head (docs/cluster.md): every farm host's devices")
def devices(inventory, as_json: bool, cluster: str | None) -> None:
    """List the devices `edgefarm run --devices all` would use, and those found but unusable."""
    inv = load_inventory(inventory)
    cluster = cluster or inv.cluster  # devices.yaml `cluster:` as --cluster
    if cluster:
        require_head(cluster)  # within 10 s, before Ray is imported or asked
        from ..cluster.connect import cluster_devices  # Ray: imported only with --cluster

        hosts = cluster_devices(cluster)
        if as_json:
            doc = {"cluster": cluster, "hosts": [dataclasses.asdict(h) for h in hosts]}
            click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
        else:
            print_devices(*flat_listing(hosts))
        return
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
    print_devices(infos, selection.unusable, selection.notes)


def print_devices(infos, unusable, notes, hosts: dict[int, str] | None = None) -> None:
    """The devices table; `hosts` (by position in infos + unusable) adds a Host column (--cluster)."""
    console = stdout_console()
    rows = []
    for n, i in enumerate(list(infos) + list(unusable)):
        hardware = (
            " ".join(x for x in (i.manufacturer, i.model) if x)
            if not kind_spec(i.kind).shares_host_cpu
            else i.cpu
        )
        rows.append(
            {
                "Host": (hosts or {}).get(n, ""),
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
    for u in unusable:
        console.print(f"[red]{u.name}[/] ({u.state}): {u.problem}")
    for note in notes:
        console.print(f"note: {note}")
