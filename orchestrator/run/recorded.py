"""What a command's request records in run.json and a `--resume` carries back: ONE list per request,
its fields whose metadata is `recorded_as(key)` (`edgefarm run`'s RunRequest, `edgefarm bench`'s
BenchRequest). cli/resume.py reads the list; `flags()` writes run.json `flags` from it; a dotted key
names the section of run.json that records the field instead (`model.path`, `bench.request.prompts`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, ClassVar


def recorded_as(key: str, *, quiet: bool = False) -> dict[str, Any]:
    """The metadata of a request field that run.json records under `key` in `flags` (a dotted key: the
    section that records it, e.g. `model.path`), so `--resume` carries it. `quiet`: written as null at
    its default (the keys that have always been written that way); null reads back as the default."""
    return {"key": key, "quiet": quiet}


class RecordedRequest:
    """A request (a frozen dataclass) whose recorded fields run.json keeps. KIND: run.json's `kind` of
    the folders its command makes and resumes ("run": written as no kind at all)."""

    KIND: ClassVar[str] = "run"

    @classmethod
    def recorded(cls) -> tuple[dataclasses.Field, ...]:
        """The fields run.json records (its key: `f.metadata["key"]`), in the order it writes them."""
        return tuple(f for f in dataclasses.fields(cls) if "key" in f.metadata)  # type: ignore[arg-type]

    def flags(self) -> dict[str, Any]:
        """run.json `flags`: every recorded field whose key is a plain one (None where not given)."""
        return self.section("")

    def section(self, prefix: str) -> dict[str, Any]:
        """The recorded fields under one dotted prefix (`bench.request.`: the bench's grid), by the key's
        last part; "" the plain keys (`flags`)."""
        out: dict[str, Any] = {}
        for f in self.recorded():
            key = f.metadata["key"]
            if (prefix and not key.startswith(prefix)) or (not prefix and "." in key):
                continue
            value = getattr(self, f.name)
            if f.metadata["quiet"] and value == f.default:
                value = None
            out[key[len(prefix) :]] = (
                str(value) if isinstance(value, Path) else list(value) if isinstance(value, tuple) else value
            )
        return out


__all__ = ["RecordedRequest", "recorded_as"]
