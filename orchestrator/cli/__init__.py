"""The `edgefarm` command: one click group, one module per sub-command."""

from __future__ import annotations

import sys

import click

from ..errors import EdgefarmError


class _Group(click.Group):
    """Prints EdgefarmError once, without a traceback (`--debug` shows it), and exits with its code."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except EdgefarmError as e:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(f"error: {e}", err=True)
            sys.exit(e.exit_code)


@click.group(cls=_Group)
@click.option("--debug", is_flag=True, help="Show tracebacks for edgefarm errors.")
@click.version_option(package_name="edgefarm")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Evaluate an on-device LiteRT-LM model on every attached phone and board."""
    ctx.obj = {"debug": debug}


def _register() -> None:
    from . import dataset, devices, report, run, score, setup

    for module in (run, devices, score, report, dataset, setup):
        for command in module.COMMANDS:
            main.add_command(command)


_register()
