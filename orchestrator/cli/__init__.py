"""The `edgefarm` command: one click group, one module per sub-command."""

from __future__ import annotations

import atexit
import importlib
import os
import sys
import threading

import click

from ..errors import EdgefarmError

# command -> the module that defines it: a command's module (and what it imports: adbutils, asyncssh,
# nltk, rouge-score, ...) is imported only when that command runs, so `edgefarm run` starts fast.
COMMAND_MODULES = {"run": "run", "devices": "devices", "score": "score", "report": "report", "compare": "report",
                   "dataset": "dataset", "setup": "setup"}  # fmt: skip


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


@click.group(cls=_Group)
@click.option("--debug", is_flag=True, help="Show tracebacks for edgefarm errors.")
@click.version_option(package_name="edgefarm")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Evaluate an on-device LiteRT-LM model on every attached phone and board."""
    ctx.obj = {"debug": debug}


def entry() -> None:
    """The `edgefarm` console script (and `python -m orchestrator`): the click group, then a quick exit.

    Once the command has returned, everything it wrote is on disk; what is left is the interpreter's
    teardown of every imported module (nltk, rouge-score, the runtime's bindings), which
    measured 0.22-0.27 s at the end of every `edgefarm run` on a 2-core host. So the process leaves as
    CPython would, minus that teardown: worker threads are joined, atexit handlers run, stdout and
    stderr are flushed (a failed flush is exit 120, as CPython reports it), then os._exit.
    """
    try:
        main()  # standalone mode: always ends in SystemExit
        code = 0
    except SystemExit as e:
        code = _exit_status(e.code)
    os._exit(_finish_process(code))


def _exit_status(code: object) -> int:
    """sys.exit()'s argument as the process status: None is 0, an int itself, anything else is
    printed to stderr and is 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _finish_process(code: int) -> int:
    for t in threading.enumerate():  # non-daemon threads, as interpreter shutdown would wait for them
        if t is not threading.main_thread() and not t.daemon:
            t.join()
    atexit._run_exitfuncs()  # what CPython runs at this point of its own shutdown
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 120
    return code
