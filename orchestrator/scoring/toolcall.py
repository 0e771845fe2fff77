"""Tool-call scoring: find a call in a model output and compare it with the expected one.

Pure functions. What counts as a call (JSON shapes, wrappers, Python-call syntax) and how argument
values are compared is written down in docs/scoring.md.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from ..datasets.types import ExpectedCall
from .structured import json_candidates
from .types import CallCheck, ParsedCall

_WRAPPERS = ("tool_calls", "tool_call", "function_call", "function")
_ARG_KEYS = ("arguments", "parameters", "args")
_PY_CALL = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)\s*\(")
_JSON_WORDS = {"true": True, "false": False, "null": None}


def _call_from_json(value: Any, depth: int = 0) -> ParsedCall | None:
    """A call inside one JSON value: {name, arguments}, possibly wrapped (OpenAI / tool_call)."""
    if depth > 6:
        return None
    if isinstance(value, list):
        for item in value:
            call = _call_from_json(item, depth + 1)
            if call is not None:
                return call
        return None
    if not isinstance(value, dict):
        return None
    for key in _WRAPPERS:
        if isinstance(value.get(key), (dict, list)):
            call = _call_from_json(value[key], depth + 1)
            if call is not None:
                return call
    name = value.get("name")
    if not isinstance(name, str) or not name.strip():
        return None
    args: Any = next((value[k] for k in _ARG_KEYS if k in value), {})
    if isinstance(args, str):  # OpenAI sends arguments as a JSON string
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            return ParsedCall(name.strip(), {}, "json", f"arguments are not valid JSON: {args[:60]!r}")
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return ParsedCall(name.strip(), {}, "json", f"arguments are a {type(args).__name__}, not an object")
    return ParsedCall(name.strip(), args, "json")


def _closing_paren(text: str, open_at: int) -> int | None:
    """Index of the `)` matching text[open_at] == '(', skipping quoted strings."""
    depth, i, quote = 0, open_at, ""
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return i if ch == ")" else None
        i += 1
    return None


def _literal(node: ast.AST) -> Any:
    if isinstance(node, ast.Name) and node.id in _JSON_WORDS:
        return _JSON_WORDS[node.id]
    return ast.literal_eval(node)


def _python_call(text: str, tools: Sequence[Mapping[str, Any]]) -> ParsedCall | None:
    """`name(arg=value, ...)` with literal values. Counts when the name is one of the row's tools or
    the call has keyword arguments, so prose like "(see above)" is never taken for a call."""
    for m in _PY_CALL.finditer(text):
        end = _closing_paren(text, m.end() - 1)
        if end is None:
            continue
        try:
            node = ast.parse(text[m.start() : end + 1], mode="eval").body
        except SyntaxError:
            continue
        if not isinstance(node, ast.Call):
            continue
        name = m.group(1).rsplit(".", 1)[-1]  # functions.get_weather -> get_weather
        spec = tool_spec(tools, name)
        try:
            args = {kw.arg: _literal(kw.value) for kw in node.keywords if kw.arg is not None}
            positional = [_literal(a) for a in node.args]
        except (ValueError, TypeError, SyntaxError):
            continue
        if len(args) != len(node.keywords):  # **kwargs
            continue
        if positional:
            params = list(_properties(spec))
            if spec is None or len(positional) > len(params):
                continue
            args = {**dict(zip(params, positional)), **args}
        if spec is not None or args:
            return ParsedCall(name, args, "python")
    return None


def parse_call(output: str, tools: Sequence[Mapping[str, Any]] = ()) -> ParsedCall | None:
    """The first tool call in `output`: JSON (whole, fenced, or embedded) first, then Python syntax."""
    for value, _source in json_candidates(output):
        call = _call_from_json(value)
        if call is not None:
            return call
    return _python_call(output, tools)


def tool_spec(tools: Sequence[Mapping[str, Any]], name: str) -> Mapping[str, Any] | None:
    """The function spec called `name` among OpenAI-style tool specs (wrapped or bare)."""
    for tool in tools:
        fn = tool.get("function", tool) if isinstance(tool, Mapping) else None
        if isinstance(fn, Mapping) and fn.get("name") == name:
            return fn
    return None


def _properties(spec: Mapping[str, Any] | None) -> Mapping[str, Any]:
    if spec is None:
        return {}
    params = spec.get("parameters") or {}
    return params.get("properties") or {} if isinstance(params, Mapping) else {}


def _as_bool(v: Any) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().lower() in ("true", "false"):
        return v.strip().lower() == "true"
    return None


def _as_number(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            x = float(v.strip())
        except ValueError:
            return None
        return x if math.isfinite(x) else None
    return None


def _norm_text(s: str) -> str:
    return " ".join(s.split()).casefold()


def values_match(expected: Any, got: Any) -> bool:
    """Argument equality: strings case/whitespace-normalised, numbers numerically (3 == 3.0 == "3"),
    booleans as booleans ("true" == True), lists in order, objects with the same keys."""
    if isinstance(expected, bool) or isinstance(got, bool):
        e, g = _as_bool(expected), _as_bool(got)
        return e is not None and e == g
    if isinstance(expected, (int, float)) or isinstance(got, (int, float)):
        e, g = _as_number(expected), _as_number(got)
        return e is not None and g is not None and math.isclose(e, g, rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(expected, str) and isinstance(got, str):
        return _norm_text(expected) == _norm_text(got)
    if expected is None or got is None:
        return expected is None and got is None
    if isinstance(expected, (list, tuple)) and isinstance(got, (list, tuple)):
        return len(expected) == len(got) and all(values_match(e, g) for e, g in zip(expected, got))
    if isinstance(expected, Mapping) and isinstance(got, Mapping):
        return set(expected) == set(got) and all(values_match(expected[k], got[k]) for k in expected)
    return False


def _show(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False)[:60]


def compare_call(
    expected: ExpectedCall, call: ParsedCall, tools: Sequence[Mapping[str, Any]] = ()
) -> str | None:
    """The first check the call fails, or None when it is the expected call.

    Extra arguments pass only when they are documented parameters of the tool and their value
    validates against that parameter's schema."""
    if call.problem:
        return call.problem
    if call.name != expected.name:
        return f"called {call.name!r}, expected {expected.name!r}"
    for key, want in expected.arguments.items():
        if key not in call.arguments:
            return f"missing argument {key!r}"
        if not values_match(want, call.arguments[key]):
            return f"argument {key!r} is {_show(call.arguments[key])}, expected {_show(want)}"
    props = _properties(tool_spec(tools, call.name))
    for key in call.arguments:
        if key in expected.arguments:
            continue
        if key not in props:
            return f"unexpected argument {key!r} (not a parameter of {call.name!r})"
        error = best_match(Draft202012Validator(props[key]).iter_errors(call.arguments[key]))
        if error is not None:
            return f"argument {key!r}: {error.message}"
    return None


def check_call(expected: ExpectedCall, output: str, tools: Sequence[Mapping[str, Any]] = ()) -> CallCheck:
    """Tool-row verdict: the expected call, or (refusal rows) a non-empty text answer with no call."""
    call = parse_call(output, tools)
    if expected.refuse:
        if not output.strip():
            return CallCheck(True, None, "empty output where a text refusal was expected")
        if call is not None:
            return CallCheck(True, call, f"called {call.name!r} where a text refusal was expected")
        return CallCheck(True, None, None)
    if call is None:
        return CallCheck(False, None, "no tool call found in the output")
    return CallCheck(False, call, compare_call(expected, call, tools))
