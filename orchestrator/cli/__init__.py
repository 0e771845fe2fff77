"""The `edgefarm` command: one click group, one module per sub-command."""

from __future__ import annotations

import importlib
import sys

import click

from ..errors import EdgefarmError
from ..interrupt import INTERRUPTED_EXIT

# command -> the module that defines it: a command's module (and what it imports: adbutils, asyncssh,
# nltk, rouge-score, ...) is imported only when that command runs.
COMMAND_MODULES = {"run": "run", "devices": "devices", "score": "score", "report": "report", "compare": "report",
                   "dataset": "dataset", "setup": "setup", "history": "history", "bench": "bench",
                   "doctor": "doctor", "ab": "ab"}  # fmt: skip


class _Group(click.Group):
    """Prints EdgefarmError once, without a traceback (`--debug` shows it), and exits with its code.
    Sub-commands load on first use (COMMAND_MODULES)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(COMMAND_MODULES) | set(self.commands))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands and name in COMMAND_MODULES:
            module = importlib.import_module(f"{__name__}.{COMMAND_MODULES[name]}")
            for command in module.COMMANDS:
                self.add_command(command)
        return self.commands.get(name)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except EdgefarmError as e:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(f"error: {e}", err=True)
            sys.exit(e.exit_code)
        except (
            KeyboardInterrupt
        ):  # a Ctrl-C outside a run's own handling: 130 as a shell says, never click's 1
            click.echo("interrupted", err=True)
            sys.exit(INTERRUPTED_EXIT)


@click.group(cls=_Group)
@click.option("--debug", is_flag=True, help="Show tracebacks for edgefarm errors.")
@click.version_option(package_name="edgefarm")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Evaluate an on-device LiteRT-LM model on every attached phone and board."""
    ctx.obj = {"debug": debug}


def entry() -> None:
    """The `edgefarm` console script (and `python -m orchestrator`)."""
    main()
