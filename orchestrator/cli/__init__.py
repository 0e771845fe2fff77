"""The `edgefarm` command: one click group, one module per sub-command, imported when it runs."""

from __future__ import annotations

import importlib
import sys
from typing import NoReturn

import click
from click import exceptions as ce

from ..errors import ConfigError, EdgefarmError
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
    "serve": ("serve:serve", ("Serve every selected device as an OpenAI-compatible endpoint: GET /v1/models, POST "
              "/v1/chat/completions and /v1/completions; each answer says which device answered and how fast.")),
    "setup": ("setup:setup", ("Prepare boards: a Python env in the board's work folder with litert-lm-api, and the "
              "runner.")),
}  # fmt: skip


def load_command(name: str) -> click.Command:
    """The command `name` of COMMANDS, its module imported now."""
    module, attr = COMMANDS[name][0].split(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), attr)


class _Group(click.Group):
    """Prints EdgefarmError once, without a traceback (`--debug` shows it), and exits with its code;
    click's own command-line errors are said the same way (usage.py), exit 2. Sub-commands load on
    first use (COMMANDS)."""

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

    def make_context(self, info_name, args, parent=None, **extra) -> click.Context:
        try:  # the group's own options (`edgefarm --bogus`)
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.ClickException as e:
            _fail(usage_error(e), debug=False)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except click.ClickException as e:  # click's own (a bad choice, a range, a missing argument): ours
            _fail(usage_error(e), debug=False)
        except EdgefarmError as e:
            _fail(e, debug=bool(ctx.obj and ctx.obj.get("debug")))
        except (
            KeyboardInterrupt
        ):  # a Ctrl-C outside a run's own handling: 130 as a shell says, never click's 1
            click.echo("interrupted", err=True)
            sys.exit(INTERRUPTED_EXIT)


def _fail(e: EdgefarmError, *, debug: bool) -> NoReturn:
    """Every error of every command, printed one way: `error: WHERE: WHAT` and `  fix: ...`."""
    if debug:
        raise e
    click.echo(f"error: {e}", err=True)
    sys.exit(e.exit_code)


# ---- click's own command-line errors in the project's one voice (issue 41): every click.ClickException of
# every command becomes a ConfigError naming the parameter, with the fix click's parameter knows (its
# choices, its range, the options close to a mistyped one) and the command's --help; exit 2.


def _hint(param: click.Parameter | None, ctx: click.Context | None) -> str:
    """The parameter as the user types it: `-r/--repetitions`, or an argument's `RUN`."""
    if param is None:
        return ""
    if isinstance(param, click.Option):
        return "/".join(param.opts)
    return param.human_readable_name.upper()


def _takes(param: click.Parameter | None, flag: str) -> str:
    """What the parameter takes, from its click type ('' when there is nothing more to say)."""
    kind = param.type if param is not None else None
    if isinstance(kind, click.Choice):
        return f"give {flag} one of: {', '.join(map(str, kind.choices))}"
    if isinstance(kind, (click.IntRange, click.FloatRange)):
        low = "" if kind.min is None else f"{'above' if kind.min_open else 'at least'} {kind.min}"
        high = "" if kind.max is None else f"{'below' if kind.max_open else 'at most'} {kind.max}"
        whole = "whole " if isinstance(kind, click.IntRange) else ""
        return f"give {flag} a {whole}number {' and '.join(x for x in (low, high) if x)}"
    if isinstance(kind, click.Path):
        return f"give {flag} a path that {'exists' if kind.exists else 'can be written'}"
    takes = getattr(kind, "takes", "")  # a type of the project's own says what it takes (cli/options.py BackendList)
    return f"give {flag} {takes}" if takes else ""


def usage_error(e: click.ClickException) -> ConfigError:
    """The click error as a ConfigError naming the parameter and the fix (exit 2)."""
    ctx = getattr(e, "ctx", None)
    command = ctx.command_path if ctx is not None else "edgefarm"
    see = f"see `{command} --help`"
    if isinstance(e, ce.NoSuchOption):
        close = ", ".join(e.possibilities or ())
        fix = f"did you mean {close}? ({see})" if close else f"{see} for its options"
        return ConfigError(f"no such option {e.option_name}", where=command, fix=fix)
    if isinstance(e, ce.MissingParameter):
        flag = _hint(e.param, ctx)
        what = e.format_message().rstrip(".")
        usage = ctx.get_usage().replace("Usage: ", "") if ctx is not None else ""
        return ConfigError(_sentence(what), where=flag or command,
                           fix=f"give {flag or 'it'} ({f'usage: {usage}; ' if usage else ''}{see})")  # fmt: skip
    if isinstance(e, ce.BadParameter):
        flag = _hint(e.param, ctx) or (" ".join(e.param_hint) if isinstance(e.param_hint, (list, tuple))
                                       else str(e.param_hint or ""))  # fmt: skip
        takes = _takes(e.param, flag)
        return ConfigError(e.message.rstrip("."), where=flag or command,
                           fix=f"{takes} ({see})" if takes else see)  # fmt: skip
    if isinstance(e, ce.FileError):
        return ConfigError(f"cannot open {e.ui_filename}: {e.message}", where=command,
                           fix="check the path and its permissions")  # fmt: skip
    return ConfigError(_sentence(e.format_message().rstrip(".")), where=command, fix=see)


def _sentence(text: str) -> str:
    """Click's capitalised message as the rest of ours read after `where: `."""
    return text[:1].lower() + text[1:]


@click.group(cls=_Group)
@click.option("--debug", is_flag=True, help="Show tracebacks for edgefarm errors.")
@click.version_option(package_name="edgefarm")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Evaluate an on-device LiteRT-LM model on every attached phone and board."""
    ctx.obj = {"debug": debug}


def entry() -> None:
    """The `edgefarm` console script (and `python -m orchestrator`, which names itself `edgefarm` too: its
    usage and fix lines point to `edgefarm run --help`, not `python -m orchestrator run --help`)."""
    main(prog_name="edgefarm")
