"""`edgefarm doctor`: for every device `--devices` would use, what a run needs there and whether it is
there, each missing thing with its fix. The checks are the ones `edgefarm run` makes before anything
starts (orchestrator/runners/readiness.py); exit 0 when every device is ready, else 3. With a cluster
(`--cluster`, or devices.yaml `cluster:`, as `run` takes it) each farm host's agent checks its own
devices, as `run --cluster` does before it starts them."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from ..bundled import BUNDLED_DATASET, BUNDLED_MODEL
from ..cluster.probe import require_head
from ..datasets import load_dataset, require_valid
from ..errors import DeviceError
from ..inventory import load_inventory, select_devices
from ..models import inspect_model
from ..runners.readiness import Readiness, assess_all, run_need, unreachable
from .options import cluster_option, inventory_option

MARKS = {(True, True): "ok  ", (True, False): "ok  ", (False, True): "FAIL", (False, False): "warn"}


@click.command("doctor")
@click.option("--devices", "device_spec", default="all", show_default=True,
              help="all | local | NAME[,NAME...]: the devices `edgefarm run --devices` would use")  # fmt: skip
@inventory_option
@click.option("--model", type=click.Path(path_type=Path), default=BUNDLED_MODEL, show_default="bundled tiny model",
              help="the .litertlm the run would push (its size and memory floor are checked)")  # fmt: skip
@click.option("--dataset", "dataset_spec", default=str(BUNDLED_DATASET), show_default="bundled EdgeMMEval set",
              help="the dataset the run would push (its media's size is checked)")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="print JSON instead of text")
@cluster_option("a Ray cluster's head (docs/cluster.md): check every farm host's devices there")
def doctor(
    device_spec: str, inventory, model: Path, dataset_spec: str, as_json: bool, cluster: str | None
) -> None:
    """What each device needs for a run and whether it is there, with the fix for each missing thing."""
    inv = load_inventory(inventory)
    cluster = cluster or inv.cluster  # devices.yaml `cluster:` as --cluster, as `run` takes it
    farm = None
    if cluster:
        require_head(cluster)  # within 10 s, before Ray is imported or asked
        from ..cluster.controller import ClusterFarm  # Ray: imported only with a cluster

        farm = ClusterFarm(cluster)
        farm.begin()  # the farm hosts' agents start while the model and dataset are read
    summary = inspect_model(model)
    dataset = require_valid(load_dataset(dataset_spec))
    need = run_need(summary, dataset.samples)
    if farm is not None:
        sel = farm.select(device_spec)
        found = farm.readiness(sel, need) + [unreachable(u) for u in sel.unusable]
        host_of = {i.name: h.host for h in farm.hosts for i in (*h.infos, *h.unusable)}
    else:
        sel = select_devices(inv, device_spec)
        found = assess_all(sel.devices, need, os.environ) + [unreachable(u) for u in sel.unusable]
        host_of = {}
    if as_json:
        listed = [{**r.to_dict(), **({"host": host_of.get(r.info.name, "")} if farm else {})} for r in found]
        doc = {"devices": listed, "notes": list(sel.notes), "model": str(model),
               "model_bytes": need.model_bytes, "media_bytes": need.media_bytes,
               **({"cluster": cluster} if farm else {})}  # fmt: skip
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        for note in sel.notes:
            click.echo(f"note: {note}")
        for r in found:
            click.echo(render(r, host_of.get(r.info.name, "")))
        bad = [r.info.name for r in found if not r.ready]
        click.echo(f"{len(found) - len(bad)} of {len(found)} device(s) ready"
                   + (f"; not ready: {', '.join(bad)}" if bad else ""))  # fmt: skip
    if any(not r.ready for r in found):
        sys.exit(DeviceError.exit_code)


def render(r: Readiness, host: str = "") -> str:
    """One device (on its farm host, with a cluster): its name and verdict, then one line per check
    (and its fix when it failed)."""
    i = r.info
    where = ", ".join(x for x in (f"{i.kind} {i.serial}".strip(), i.abi) if x)
    on = f" on farm host {host}" if host else ""
    lines = [f"{i.name}{on} ({where}): {'ready' if r.ready else 'NOT READY'}"]
    for c in r.checks:
        lines.append(f"  {MARKS[(c.ok, c.blocks)]} {c.need:<13} {c.found}")
        if not c.ok and c.fix:
            lines.append(f"       {'':<13} fix: {c.fix}")
    return "\n".join(lines)
