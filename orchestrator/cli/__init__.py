"""The `edgefarm` command: one click group, one module per sub-command, imported when it runs."""

from __future__ import annotations

import importlib
import sys

import click

from ..errors import EdgefarmError
from ..interrupt import INTERRUPTED_EXIT

# The one list of commands: name -> ("module:attr" in this package, the first sentence of its help).
# A command's module (and what it imports: asyncssh, adbutils, numpy, nltk, ...) is imported only when
# that command runs or shows its own help; `edgefarm --help` lists them from the sentences here
# (click shortens each as it would the command's own help: tests/unit/cli/test_commands.py).
COMMANDS: dict[str, tuple[str, str]] = {
    "ab": ("ab:ab", ("Measure configuration B against A on the same devices in alternating blocks, so the "
           "machine's drift (load, heat, other jobs) cancels: `edgefarm ab --a \"...\" --b \"...\" --out DIR "
           "-- RUN FLAGS` (the devices, dataset and selection both share).")),
    "bench": ("bench:bench", ("Prefill and decode speed at fixed shapes (-p prompt, -n generated, -d depth) on "
              "every device.")),
    "compare": ("report:compare", ("Compare two runs device by device (B against A) on the same samples: verdict "
                "flips with an exact McNemar test, figures as paired ratios B/A with 95% intervals; significant "
                "changes for the worse first.")),
    "dataset": ("dataset:dataset", "Inspect evaluation datasets."),
    "devices": ("devices:devices", ("List the devices `edgefarm run --devices all` would use, and those found but "
                "unusable.")),
    "doctor": ("doctor:doctor", ("What each device needs for a run and whether it is there, with the fix for each "
               "missing thing.")),
    "history": ("history:history", ("Every recorded run: each device's figures over time, per configuration; each run "
                "judged against the spread between the comparable runs before it (changes, outliers, runs too few "
                "to judge); each figure's stability.")),
    "report": ("report:report", ("Render a run folder's combined report to stdout (rebuilt from the device "
               "folders); with --merge, the runs of several controllers as one report.")),
    "run": ("run:run", ("Run the model over the dataset on every selected device; write and print the combined "
            "report.")),
    "score": ("score:score", "Score RESULTS (a JSON object: test_id -> raw output string) and write report.json."),
    "setup": ("setup:setup", ("Prepare boards: a Python env in the board's work folder with litert-lm-api, and the "
              "runner.")),
}  # fmt: skip


def load_command(name: str) -> click.Command:
    """The command `name` of COMMANDS, its module imported now."""
    module, attr = COMMANDS[name][0].split(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), attr)


class _Group(click.Group):
    """Prints EdgefarmError once, without a traceback (`--debug` shows it), and exits with its code.
    Sub-commands load on first use (COMMANDS)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(COMMANDS) | set(self.commands))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands and name in COMMANDS:
            self.add_command(load_command(name), name)
        return self.commands.get(name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of `edgefarm --help` from COMMANDS' sentences, no command's module imported."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(map(len, names))
        rows = [
            (n, click.Command(n, help=COMMANDS[n][1]) if n in COMMANDS else self.commands[n]) for n in names
        ]
        with formatter.section("Commands"):
            formatter.write_dl([(n, c.get_short_help_str(limit)) for n, c in rows])

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
