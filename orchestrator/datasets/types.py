"""The one Sample model every dataset format is normalised into."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

PartKind = Literal["text", "image", "audio", "video"]
MEDIA_KINDS = ("image", "audio", "video")


@dataclass(frozen=True)
class Part:
    """One piece of a user turn: text, or a media file on the host."""

    kind: PartKind
    text: str = ""
    path: Path | None = None  # absolute host path, inside the dataset folder (or a decoded-media cache)


@dataclass(frozen=True)
class Turn:
    """One user message; parts keep their order (text, media, text ...)."""

    parts: tuple[Part, ...]

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if p.kind == "text")

    @property
    def media(self) -> tuple[Part, ...]:
        return tuple(p for p in self.parts if p.kind != "text")


@dataclass(frozen=True)
class Constraint:
    """Structured-output constraint of a row (`constraint_type` + its spec)."""

    type: Literal["json_schema", "regex", "grammar"]
    schema: Mapping[str, Any] | None = None  # json_schema
    pattern: str | None = None  # regex (full match after trimming)
    grammar: Mapping[str, Any] | None = None  # grammar-style shape, see docs/scoring.md


@dataclass(frozen=True)
class ExpectedCall:
    """What a tool row expects: a call (name + arguments) or a text-only refusal."""

    name: str | None = None
    arguments: Mapping[str, Any] = field(default_factory=dict)
    refuse: bool = False


@dataclass(frozen=True)
class Sample:
    """A dataset row, normalised. `where` is `file:line` for error messages."""

    id: str
    modality: str
    task: str
    turns: tuple[Turn, ...]
    reference: str
    references: tuple[str, ...]  # all acceptable phrasings (reference_variants, reference included)
    format: str = "edgemmeval"
    subset: str = "default"
    system: str | None = None
    constraint: Constraint | None = None
    tools: tuple[Mapping[str, Any], ...] = ()  # OpenAI-style function specs
    expected_call: ExpectedCall | None = None
    choices: tuple[str, ...] = ()  # multiple choice options (General-VMCQ), letters A, B, ...
    max_output_tokens: int | None = None
    where: str = ""
    bench: Mapping[str, Any] | None = None  # `edgefarm bench`: the cell measured (bench/grid.py)

    @property
    def media(self) -> tuple[Part, ...]:
        return tuple(p for t in self.turns for p in t.media)

    @property
    def media_kinds(self) -> frozenset[str]:
        return frozenset(p.kind for p in self.media)


@dataclass(frozen=True)
class Problem:
    """One validation problem, located precisely enough to fix it."""

    where: str  # "data/test/metadata.jsonl:42"
    message: str  # what is wrong and what to do
    test_id: str = ""
    field: str = ""

    def __str__(self) -> str:
        bits = [self.where]
        if self.test_id:
            bits.append(self.test_id)
        if self.field:
            bits.append(f"field '{self.field}'")
        return f"{' '.join(bits)}: {self.message}"


@dataclass(frozen=True)
class Dataset:
    """A loaded dataset: the valid samples plus every problem found on the way."""

    name: str
    format: str
    root: Path  # the folder media paths may not escape
    files: tuple[Path, ...]  # the files read (hashed into run.json)
    samples: tuple[Sample, ...]
    problems: tuple[Problem, ...] = ()

    @property
    def by_modality(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for s in self.samples:
            counts[s.modality] = counts.get(s.modality, 0) + 1
        return counts
