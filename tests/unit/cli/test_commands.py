"""The command table (orchestrator/cli COMMANDS): `edgefarm --help` lists every command with the short
help click makes of its own help, without importing any command's module; each name loads its command."""

import subprocess
import sys

import click
import pytest

from orchestrator.cli import COMMANDS, load_command, main


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_name_loads_its_command_and_the_table_says_what_its_help_says(name):
    command = load_command(name)
    assert command.name == name
    listed = click.Command(name, help=COMMANDS[name][1])
    for limit in range(20, 240):  # every terminal width: the line `--help` prints is the command's own
        assert listed.get_short_help_str(limit) == command.get_short_help_str(limit), (name, limit)


def test_help_lists_every_command_and_imports_none_of_their_modules(monkeypatch):
    script = (
        "import sys\n"
        "from orchestrator.cli import main\n"
        "try:\n"
        "    main(['--help'], prog_name='edgefarm')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('orchestrator.cli.')))\n"
    )
    monkeypatch.setenv("COLUMNS", "100")  # the same width here and in the child
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    *help_lines, loaded = p.stdout.splitlines()
    assert loaded == "[]", loaded
    listed = help_lines[help_lines.index("Commands:") :]
    assert [line.split()[0] for line in listed[1:]] == sorted(COMMANDS)
    every = click.Group("edgefarm", commands=[load_command(name) for name in COMMANDS])  # all imported
    formatter = click.HelpFormatter()
    every.format_commands(click.Context(every), formatter)
    assert formatter.getvalue().splitlines() == listed
    ctx = click.Context(main)
    assert all(main.get_command(ctx, name) is load_command(name) for name in COMMANDS)
