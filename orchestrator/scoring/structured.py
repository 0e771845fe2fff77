"""Structured-output format checks: JSON Schema, regex full match, grammar-style shapes.

Pure functions; `check_format(constraint, output)` is what the scorer calls. The rules (where JSON
is looked for, what each grammar shape accepts) are documented in docs/scoring.md.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

import regex
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from ..datasets.types import Constraint
from .types import FormatCheck

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()
_NOTHING = object()


def json_candidates(text: str) -> Iterator[tuple[Any, str]]:
    """Every JSON value in `text`, best first: the whole trimmed text, then ``` fences, then each
    `{`/`[` position that starts a valid JSON value (left to right). Yields (value, source text)."""
    whole = text.strip()
    if whole:
        value = _loads(whole)
        if value is not _NOTHING:
            yield value, whole
    for m in _FENCE.finditer(text):
        body = m.group(2).strip()
        value = _loads(body)
        if value is not _NOTHING:
            yield value, body
    for i, ch in enumerate(text):
        if ch in "{[":
            try:
                value, end = _DECODER.raw_decode(text, i)
            except ValueError:
                continue
            yield value, text[i:end]


def find_json(text: str) -> tuple[Any, str] | None:
    """The first JSON value `json_candidates` finds, or None."""
    return next(json_candidates(text), None)


def _loads(s: str) -> Any:
    try:
        return json.loads(s)
    except ValueError:
        return _NOTHING


def json_content(value: Any) -> str:
    """The leaf values of a JSON value in document order, space-joined; object keys are left out.

    Keys are fixed by the schema (the format half of the check), so counting them as content
    would let a schema-valid answer with wrong values pass the content BLEU."""
    if isinstance(value, dict):
        return " ".join(t for t in (json_content(v) for v in value.values()) if t)
    if isinstance(value, list):
        return " ".join(t for t in (json_content(v) for v in value) if t)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def content_references(constraint: Constraint | None, references: Sequence[str]) -> list[str]:
    """References as the content BLEU sees them: JSON references reduced to their leaf values."""
    if constraint is None or constraint.type != "json_schema":
        return list(references)
    out = []
    for ref in references:
        value = _loads(ref.strip())
        out.append(ref if value is _NOTHING else json_content(value))
    return out


def check_json_schema(schema: Any, output: str) -> FormatCheck:
    """Valid when the first JSON value found validates (draft 2020-12, `format` not asserted)."""
    found = find_json(output)
    if found is None:
        return FormatCheck("json_schema", False, "no JSON found in the output", output.strip())
    value, _source = found
    content = json_content(value)
    error = best_match(Draft202012Validator(schema).iter_errors(value))
    if error is not None:
        return FormatCheck("json_schema", False, f"schema: {error.message} at {error.json_path}", content)
    return FormatCheck("json_schema", True, None, content)


REGEX_TIMEOUT_S = 1.0  # one dataset pattern against one answer; the `regex` engine stops it there


class RegexTimeout(ValueError):
    """A dataset pattern that did not finish on an answer within REGEX_TIMEOUT_S: the sample's
    scoring error (the row is named by the record that holds it), never a hung run."""


def check_regex(pattern: str, output: str) -> FormatCheck:
    """Valid when the trimmed output fully matches the pattern (no flags).

    Matched by the `regex` package with a time limit: Python's `re` backtracks without bound on
    patterns such as `(\\w+\\s?)*`, and a C-level match cannot be interrupted by Ctrl-C."""
    text = output.strip()
    try:
        matched = regex.fullmatch(pattern, text, timeout=REGEX_TIMEOUT_S)
    except (re.error, regex.error) as e:  # the loader rejects bad patterns; a hand-built Sample may not
        return FormatCheck("regex", False, f"bad pattern /{pattern}/: {e}", text)
    except TimeoutError:
        raise RegexTimeout(
            f"pattern /{clip_pattern(pattern)}/ did not finish within {REGEX_TIMEOUT_S:g} s on this "
            f"output ({len(text)} characters): it backtracks catastrophically; rewrite it without "
            "nested or overlapping repeats (see `edgefarm dataset check`)"
        ) from None
    if matched is None:
        return FormatCheck("regex", False, f"output does not fully match /{pattern}/", text)
    return FormatCheck("regex", True, None, text)


def clip_pattern(pattern: str, limit: int = 80) -> str:
    return pattern if len(pattern) <= limit else pattern[: limit - 3] + "..."


def _lines(output: str) -> list[str]:
    return [line.strip() for line in output.strip().splitlines() if line.strip()]


def _count_ok(n: int, grammar: Any) -> str | None:
    lo, hi = grammar.get("min_items"), grammar.get("max_items")
    if lo is not None and n < lo:
        return f"{n} item(s), fewer than min_items {lo}"
    if hi is not None and n > hi:
        return f"{n} item(s), more than max_items {hi}"
    return None


_NUMBERED = re.compile(r"(\d+)[.)]\s+\S")
_BULLET = re.compile(r"[-*•]\s+\S")
_KEY_VALUE = re.compile(r"([^:]+?)\s*:\s*(\S.*)")


def _numbered_list(lines: list[str], g: Any) -> str | None:
    for i, line in enumerate(lines, start=1):
        m = _NUMBERED.match(line)
        if m is None:
            return f"line {i} is not a numbered item `{i}. text`: {line[:40]!r}"
        if int(m.group(1)) != i:
            return f"item {i} is numbered {m.group(1)} (numbering must run 1, 2, 3 ...)"
    return _count_ok(len(lines), g)


def _bullet_list(lines: list[str], g: Any) -> str | None:
    for i, line in enumerate(lines, start=1):
        if _BULLET.match(line) is None:
            return f"line {i} is not a bullet item `- text` / `* text`: {line[:40]!r}"
    return _count_ok(len(lines), g)


def _key_value(lines: list[str], g: Any) -> str | None:
    seen: set[str] = set()
    for i, line in enumerate(lines, start=1):
        m = _KEY_VALUE.fullmatch(line)
        if m is None:
            return f"line {i} is not `key: value`: {line[:40]!r}"
        seen.add(m.group(1).strip().lower())
    missing = [k for k in g.get("keys", []) if str(k).strip().lower() not in seen]
    return f"missing key(s): {', '.join(missing)}" if missing else None


def _csv(lines: list[str], g: Any) -> str | None:
    rows = [[cell.strip() for cell in row] for row in csv.reader(io.StringIO("\n".join(lines)))]
    columns = g.get("columns")
    header = g.get("header")
    if columns is None and header:
        columns = len(header)
    for i, row in enumerate(rows, start=1):
        if columns is not None and len(row) != columns:
            return f"row {i} has {len(row)} column(s), expected {columns}"
    if header:
        if not rows or [c.lower() for c in rows[0]] != [str(h).strip().lower() for h in header]:
            got = rows[0] if rows else []
            return f"first row {got} is not the header {list(header)}"
        rows = rows[1:]
    if not rows:
        return "no data row"
    return None


def _one_of(output: str, g: Any) -> str | None:
    text = output.strip().lower()
    options = [str(o) for o in g.get("options", [])]
    if any(text == o.strip().lower() for o in options):
        return None
    return f"output is not one of {options}"


def check_grammar(grammar: Any, output: str) -> FormatCheck:
    """Valid when the output has the grammar's shape (see docs/scoring.md for each shape)."""
    shape = grammar.get("shape")
    text = output.strip()
    if not text:
        return FormatCheck("grammar", False, f"empty output ({shape})", text)
    lines = _lines(output)
    if shape == "numbered_list":
        failed = _numbered_list(lines, grammar)
    elif shape == "bullet_list":
        failed = _bullet_list(lines, grammar)
    elif shape == "key_value":
        failed = _key_value(lines, grammar)
    elif shape == "csv":
        failed = _csv(lines, grammar)
    elif shape == "one_of":
        failed = _one_of(output, grammar)
    else:  # the loader rejects unknown shapes; a hand-built Sample may not
        failed = f"unknown grammar shape {shape!r}"
    return FormatCheck("grammar", failed is None, f"{shape}: {failed}" if failed else None, text)


def check_format(constraint: Constraint, output: str) -> FormatCheck:
    """Dispatch on `constraint.type`."""
    if constraint.type == "json_schema":
        return check_json_schema(constraint.schema or {}, output)
    if constraint.type == "regex":
        return check_regex(constraint.pattern or "", output)
    if constraint.type == "grammar":
        return check_grammar(constraint.grammar or {}, output)
    return FormatCheck(str(constraint.type), False, f"unknown constraint type {constraint.type!r}", output)
