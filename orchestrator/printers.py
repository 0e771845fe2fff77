"""The one printer registry: every output format of every command, the source of each `--format` /
`-o` choice (STYLE.md section 4: one record, many printers).

A printer belongs to one output (what it prints: a run's report, a comparison, the history, a
history export, bench's llama-bench rows) and has a name (the format on the command line), its pure
renderer (the output's values in, text out) and, for `term`, what draws it on the terminal (rich,
fitted to its width) instead. Renderers are named "module:function" and imported when used, as the
commands in cli/__init__.py are: a command's `--help` and its choices import no printer.

A new format is its module (a pure function) and one `add` line below.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import UnknownName
from .registry import Registry

REPORT = "report"  # a run's RunReport: `edgefarm report --format`, the run folder's report.json/.md/.html
COMPARISON = "comparison"  # report/compare.py Comparison, with its note and interval: `compare`, `ab`
HISTORY = "history"  # `edgefarm history --format`: the series (history/types.py Series)
HISTORY_EXPORT = "history export"  # `edgefarm history export --format`: rows in another tool's shape
BENCH_ROWS = "bench rows"  # `edgefarm bench -o`, the run folder's bench-rows.<extension>: llama-bench rows


def _load(target: str) -> Callable[..., Any]:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


@dataclass(frozen=True)
class Printer:
    """One output format. `render`: "module:function", pure, text out ('' when the format only draws on
    the terminal); `terminal`: "module:function" that draws it on the terminal instead;
    `extension`: a written file's suffix (default: the name)."""

    output: str
    name: str
    render: str = ""
    terminal: str = ""
    extension: str = ""

    def text(self) -> Callable[..., str]:
        return _load(self.render)

    def draw(self) -> Callable[..., None]:
        return _load(self.terminal)

    @property
    def suffix(self) -> str:
        return self.extension or self.name


PRINTERS = Registry[Printer]("output format")


def add(p: Printer) -> Printer:
    if not p.render and not p.terminal:
        raise ValueError(f"printer {p.output} {p.name!r} renders nothing")  # a programming error
    return PRINTERS.add(f"{p.output}: {p.name}", p)


def formats(output: str) -> list[str]:
    """The format names of one output, in registration order (a command's choices)."""
    prefix = f"{output}: "
    return [k[len(prefix) :] for k in PRINTERS if k.startswith(prefix)]


def printer(output: str, name: str) -> Printer:
    """The printer of `output` named `name`; an unknown one is refused with the close names."""
    if f"{output}: {name}" in PRINTERS:
        return PRINTERS.get(f"{output}: {name}")
    known = formats(output)
    close = difflib.get_close_matches(name, known, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise UnknownName(f"no {output} format {name!r}.{hint}", fix=f"use one of: {', '.join(known)}")


@dataclass(frozen=True)
class Printers:
    """One output's printers, by name: `get(name)` is the text renderer (Registry's shape)."""

    output: str

    def get(self, name: str) -> Callable[..., str]:
        return printer(self.output, name).text()

    def names(self) -> list[str]:
        return formats(self.output)


_R = "orchestrator.report"
for _p in (
    Printer(REPORT, "md", f"{_R}.markdown:to_markdown"),
    Printer(REPORT, "html", f"{_R}.html_page:render_html"),
    Printer(REPORT, "json", f"{_R}.printers:to_json"),
    Printer(REPORT, "csv", f"{_R}.tables:to_csv"),
    Printer(REPORT, "jsonl", f"{_R}.tables:to_jsonl"),
    Printer(REPORT, "term", f"{_R}.terminal:to_text", f"{_R}.terminal:print_tables"),
    Printer(REPORT, "trace", f"{_R}.trace:to_trace"),
    Printer(COMPARISON, "term", terminal="orchestrator.cli.report:compare_table"),
    Printer(COMPARISON, "json", f"{_R}.compare_out:to_json"),
    Printer(COMPARISON, "md", f"{_R}.compare_out:to_markdown"),
    Printer(COMPARISON, "csv", f"{_R}.compare_out:to_csv"),
    Printer(HISTORY, "term", terminal="orchestrator.history.term:to_term"),
    Printer(HISTORY, "md", "orchestrator.history.render:to_md"),
    Printer(HISTORY, "csv", "orchestrator.history.render:to_csv"),
    Printer(HISTORY, "json", "orchestrator.history.render:to_json"),
    Printer(HISTORY_EXPORT, "llama-sql", "orchestrator.history.export:llama_sql", extension="sql"),
    Printer(HISTORY_EXPORT, "llama-jsonl", "orchestrator.history.export:llama_jsonl", extension="jsonl"),
    Printer(HISTORY_EXPORT, "litert-md", "orchestrator.history.export:litert_md", extension="md"),
    Printer(HISTORY_EXPORT, "litert-jsonl", "orchestrator.history.export:litert_jsonl", extension="jsonl"),
    Printer(BENCH_ROWS, "md", "orchestrator.bench.printers:to_md"),
    Printer(BENCH_ROWS, "csv", "orchestrator.bench.printers:to_csv"),
    Printer(BENCH_ROWS, "json", "orchestrator.bench.printers:to_json"),
    Printer(BENCH_ROWS, "jsonl", "orchestrator.bench.printers:to_jsonl"),
    Printer(BENCH_ROWS, "sql", "orchestrator.bench.printers:to_sql"),
):
    add(_p)
