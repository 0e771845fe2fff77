"""The one printer registry (orchestrator/printers.py): every `--format` / `-o` choice of every command
is its list, every printer loads, and a format registered once is a choice of its command."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import click
import pytest

from orchestrator import printers
from orchestrator.cli.ab import ab
from orchestrator.cli.bench import bench
from orchestrator.cli.history import history
from orchestrator.cli.report import compare, report
from orchestrator.errors import UnknownName
from orchestrator.printers import BENCH_ROWS, COMPARISON, HISTORY, HISTORY_EXPORT, REPORT, formats, printer


def _choices(command: click.Command, name: str) -> list[str]:
    option = next(p for p in command.params if p.name == name)
    assert isinstance(option.type, click.Choice)
    return list(option.type.choices)


def test_every_format_choice_of_every_command_is_the_registry():
    assert _choices(report, "fmt") == formats(REPORT) and "trace" in formats(REPORT)
    assert _choices(compare, "fmt") == formats(COMPARISON) == _choices(ab, "fmt")
    assert _choices(history, "fmt") == formats(HISTORY)
    assert _choices(history.commands["export"], "fmt") == formats(HISTORY_EXPORT)
    assert _choices(bench, "output") == formats(BENCH_ROWS)


def test_every_printer_loads_a_callable():
    for key in printers.PRINTERS:
        p = printers.PRINTERS.get(key)
        assert callable(p.text()) if p.render else callable(p.draw())
        assert not p.terminal or callable(p.draw())
    assert printer(HISTORY_EXPORT, "llama-sql").suffix == "sql" and printer(BENCH_ROWS, "md").suffix == "md"


def test_an_unknown_format_names_the_close_one():
    with pytest.raises(UnknownName, match="no report format 'josn'. Did you mean 'json'") as e:
        printer(REPORT, "josn")
    assert "md, html, json" in str(e.value)
    with pytest.raises(ValueError, match="twice"):
        printers.add(printers.Printer(REPORT, "md", "orchestrator.report.markdown:to_markdown"))


def test_a_format_registered_once_is_a_choice_of_its_command():
    child = textwrap.dedent(
        """
        from orchestrator import printers
        printers.add(printers.Printer(printers.REPORT, "tsv", "orchestrator.report.tables:to_csv"))
        from orchestrator.cli.report import report
        print(next(p for p in report.params if p.name == "fmt").type.choices)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "'tsv'" in done.stdout
