"""Options several commands share (--inventory, --cluster): this module imports no command's stack."""

from __future__ import annotations

import os
from pathlib import Path

import click

from android_runner.backend import BACKENDS

from ..devices.entry import address_problem
from ..devices.units import parse_backends
from ..errors import ConfigError


class BackendList(click.ParamType):
    """`--backend gpu` or `--backend cpu,gpu,npu`: kept as the normalized text (run.json's `backend`)."""

    name = "backend[,backend...]"
    takes = f"one or more of: {', '.join(BACKENDS)}, comma-separated (cpu,gpu: each device runs both)"

    def convert(self, value, param, ctx):
        try:
            return ",".join(parse_backends(str(value))) or None
        except ValueError as e:
            self.fail(str(e), param, ctx)


def inventory_option(f):
    return click.option(
        "--inventory",
        "inventory",
        type=click.Path(path_type=Path),
        default=lambda: os.environ.get("EDGEFARM_INVENTORY"),
        help="devices.yaml (default: $EDGEFARM_INVENTORY; none: attached phones + this host)",
    )(f)


def devices_option(help_text: str = "all | local | NAME[,NAME...] (see `edgefarm devices`)"):
    """--devices: which devices a command uses (inventory.py's selection)."""
    return click.option("--devices", "device_spec", default="all", show_default=True, help=help_text)


def model_option(help_text: str = ".litertlm model file"):
    """--model: the .litertlm file (default: the bundled tiny model)."""
    from ..bundled import BUNDLED_MODEL

    return click.option("--model", type=click.Path(path_type=Path), default=BUNDLED_MODEL,
                        show_default="bundled tiny model", help=help_text)  # fmt: skip


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


def settle_options(default: bool):
    """--settle/--no-settle and its criterion (docs/conditions.md): on by default for `bench` (and `ab`'s
    blocks), off for `run`. Bounds: the settings file's (android_runner/settings.py BOUNDS), in °C and s."""
    from android_runner.settings import BOUNDS

    from ..runners.base import DEFAULT_SETTLE_C, DEFAULT_SETTLE_MAX_S, DEFAULT_SETTLE_S

    def bound(key: str) -> click.FloatRange:
        least, most = BOUNDS[key]
        return click.FloatRange(least / 1000.0, most / 1000.0)

    def apply(f):
        for option in reversed((
            click.option("--settle/--no-settle", default=default, show_default=True,
                         help="before the measured block, wait until each device's temperatures settle "
                         "(--settle-c over --settle-s, at most --settle-max-s); the wait is recorded and a "
                         "device that never settles is measured and flagged"),
            click.option("--settle-c", type=bound("settle_mc"), default=DEFAULT_SETTLE_C, show_default=True,
                         help="settled: no sensor changed this much (°C) over --settle-s"),
            click.option("--settle-s", type=bound("settle_window_ms"), default=DEFAULT_SETTLE_S, show_default=True,
                         help="the window (s) --settle-c is measured over"),
            click.option("--settle-max-s", type=bound("settle_max_ms"), default=DEFAULT_SETTLE_MAX_S,
                         show_default=True, help="the longest settle wait (s); then the block runs, flagged"),
        )):  # fmt: skip
            f = option(f)
        return f

    return apply
