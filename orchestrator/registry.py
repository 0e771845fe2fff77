"""A named registry of specs (dataset formats, metrics, report printers)."""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from typing import Generic, TypeVar

from .errors import UnknownName

T = TypeVar("T")


class Registry(Generic[T]):
    """Name -> spec; `add` refuses duplicates, `get` suggests close names."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def add(self, name: str, item: T) -> T:
        if name in self._items:
            raise ValueError(f"{self.kind} {name!r} registered twice")  # programming error
        self._items[name] = item
        return item

    def get(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            close = difflib.get_close_matches(name, self._items, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise UnknownName(
                f"no {self.kind} {name!r}.{hint}",
                fix=f"use one of: {', '.join(sorted(self._items))}",
            ) from None

    def names(self) -> list[str]:
        return list(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)
