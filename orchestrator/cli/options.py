"""Options several commands share (--inventory, --cluster): this module imports no command's stack."""

from __future__ import annotations

import os
from pathlib import Path

import click

from ..devices_yaml import address_problem
from ..errors import ConfigError


def inventory_option(f):
    return click.option(
        "--inventory",
        "inventory",
        type=click.Path(path_type=Path),
        default=lambda: os.environ.get("EDGEFARM_INVENTORY"),
        help="devices.yaml (default: $EDGEFARM_INVENTORY; none: attached phones + this host)",
    )(f)


def cluster_address(value: str | None) -> str | None:
    """--cluster HOST:PORT, checked when the flag is read (a port in 1..65535)."""
    if value is not None and (why := address_problem(value)):
        raise ConfigError(why, where=f"--cluster {value}",
                          fix="pass the head's HOST:PORT, e.g. `--cluster head.lab:6379` (docs/cluster.md)")  # fmt: skip
    return value


def cluster_option(help_text: str):
    """--cluster HEAD:PORT (checked when read), for every command that can work on a Ray cluster."""
    return click.option("--cluster", default=None, metavar="ADDRESS", help=help_text,
                        callback=lambda ctx, param, value: cluster_address(value))  # fmt: skip
