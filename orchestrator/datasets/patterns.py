"""Regex patterns known to backtrack catastrophically: `edgefarm dataset check` warns about them.

A warning, not a problem: scoring bounds every match in time (scoring/structured.py), so such a row
gets a scoring error instead of a verdict on a long wrong answer, never a hung run (issue 24)."""

from __future__ import annotations

import re
from re import _constants as sre  # the standard library's own parser: the tree `re` compiles
from re import _parser
from typing import Any

from .types import Dataset, Problem


def backtracking_risk(pattern: str) -> str | None:
    """Why `pattern` may backtrack catastrophically (a repeat holding an unbounded repeat, or
    holding an alternative that can match nothing, as in `(\\w+\\s?)*` or `(a|aa)+`), else None."""
    try:
        tree = _parser.parse(pattern)
    except re.error:
        return None
    repeats = (sre.MAX_REPEAT, sre.MIN_REPEAT)

    def unbounded_inside(items: Any) -> str | None:
        for op, av in items:
            if op in repeats and av[1] == sre.MAXREPEAT:
                return "a repeated group holds another unbounded repeat (a nested quantifier)"
            if op is sre.BRANCH and any(len(alt) == 0 for alt in av[1]):
                return "a repeated group holds alternatives that overlap (one is a prefix of another)"
            for sub in _children(op, av):
                found = unbounded_inside(sub)
                if found:
                    return found
        return None

    def walk(items: Any) -> str | None:
        for op, av in items:
            if op in repeats and av[1] > 1:
                found = unbounded_inside(av[2])
                if found:
                    return found
            for sub in _children(op, av):
                found = walk(sub)
                if found:
                    return found
        return None

    return walk(tree)


def _children(op: Any, av: Any) -> list[Any]:
    """The sub-patterns of one parsed `re` node."""
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        return [av[2]]
    if op is sre.SUBPATTERN:
        return [av[3]]
    if op is sre.BRANCH:
        return list(av[1])
    if op in (sre.ASSERT, sre.ASSERT_NOT):
        return [av[1]]
    if op is sre.ATOMIC_GROUP:
        return [av]
    if op is sre.GROUPREF_EXISTS:
        return [x for x in av[1:] if x is not None]
    return []


def pattern_warnings(dataset: Dataset) -> list[Problem]:
    """A warning per regex row whose pattern is known to backtrack (see `backtracking_risk`)."""
    out = []
    for s in dataset.samples:
        if s.constraint is not None and s.constraint.type == "regex":
            why = backtracking_risk(s.constraint.pattern or "")
            if why:
                out.append(Problem(s.where, f"pattern may hang a plain regex engine: {why}; scoring "
                                   "stops each match after 1 s and counts that sample as a scoring error",
                                   test_id=s.id, field="pattern"))  # fmt: skip
    return out
