"""`edgefarm bench`'s grid: llama-bench's value syntax, the cells, and what a cell asks of a device.

Pure. A value list is llama-bench's grammar (its `parse_int_range`): comma-separated items, each a
number `a`, a range `a-b` (step 1), `a-b+s` (step s) or `a-b*m` (times m), ends included.
Every count is bounded (BOUNDS): a grid larger than MAX_CELLS is refused before anything runs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from android_runner.backend import BACKENDS

from ..datasets.types import Sample
from ..devices.units import parse_backends as backend_list
from ..errors import ConfigError

# flag -> (smallest, largest) value; a model's own context bounds the shapes further (plan.py)
BOUNDS: Mapping[str, tuple[int, int]] = {
    "-p": (1, 131072),
    "-n": (0, 16384),
    "-d": (0, 131072),
    "--threads": (1, 256),
}
MAX_VALUES = 64  # values one flag may expand to
MAX_CELLS = 512  # cells (shape x settings) of one bench
MAX_REPETITIONS = 100
_ITEM = re.compile(r"^(\d+)(?:-(\d+)(?:([+*])(\d+))?)?$")


def parse_values(text: str, flag: str) -> tuple[int, ...]:
    """`512`, `128,512`, `0-4096+1024`, `128-1024*2` -> the values, in order, without repeats."""
    lo, hi = BOUNDS[flag]
    out: list[int] = []
    for raw in text.split(","):
        m = _ITEM.match(raw.strip())
        if not m:
            raise ConfigError(f"{raw.strip()!r} is not a number or a range", where=f"{flag} {text}",
                              fix="write N, N,M, A-B, A-B+STEP or A-B*FACTOR (llama-bench's syntax)")  # fmt: skip
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) is not None else a
        op, step = m.group(3) or "+", int(m.group(4) or 1)
        if b < a or step < 1 or (op == "*" and (step < 2 or a < 1)):
            raise ConfigError(f"the range {raw.strip()!r} is empty or never ends", where=f"{flag} {text}",
                              fix="a range runs from low to high with a step >= 1 (or a factor >= 2 from >= 1)")  # fmt: skip
        v = a
        while v <= b:
            if v < lo or v > hi:
                raise ConfigError(f"{v} is outside {lo}..{hi}", where=f"{flag} {text}",
                                  fix=f"keep every {flag} value within {lo}..{hi}")  # fmt: skip
            if v not in out:
                out.append(v)
            if len(out) > MAX_VALUES:
                raise ConfigError(f"more than {MAX_VALUES} values", where=f"{flag} {text}",
                                  fix="use fewer values or a larger step")  # fmt: skip
            v = v + step if op == "+" else v * step
    return tuple(out)


def parse_backends(text: str) -> tuple[str, ...]:
    """bench's --backend, read as run's (devices/units.parse_backends), an empty list refused."""
    try:
        names = backend_list(text)
    except ValueError as e:
        names, why = (), str(e)
    else:
        why = f"no backend in {text!r}"
    if not names:
        raise ConfigError(why, where=f"--backend {text}", fix=f"use a comma list of {', '.join(BACKENDS)}")
    return names


@dataclass(frozen=True)
class Cell:
    """One shape with one engine's settings: p prompt tokens after d of context, then n decoded."""

    n_prompt: int
    n_gen: int
    n_depth: int
    backend: str
    threads: int | None  # None: the runtime's default

    @property
    def id(self) -> str:
        """The cell's row id (job items, results): `p512-n128-d0-cpu` (`-t4` with threads)."""
        t = f"-t{self.threads}" if self.threads else ""
        return f"p{self.n_prompt}-n{self.n_gen}-d{self.n_depth}-{self.backend}{t}"

    @property
    def tokens(self) -> int:
        """The context the cell fills: depth, prompt, decoded tokens."""
        return self.n_depth + self.n_prompt + self.n_gen

    def spec(self) -> dict[str, Any]:
        """JobItem.bench (android_runner/bench.py reads it)."""
        return {"n_prompt": self.n_prompt, "n_gen": self.n_gen, "n_depth": self.n_depth,
                "backend": self.backend, "threads": self.threads}  # fmt: skip

    @classmethod
    def of(cls, spec: Mapping[str, Any]) -> Cell:
        t = spec.get("threads")
        return cls(int(spec["n_prompt"]), int(spec["n_gen"]), int(spec["n_depth"]), str(spec["backend"]),
                   int(t) if t else None)  # fmt: skip

    def sample(self) -> Sample:
        """The cell as the farm's work unit (a Sample with no turns; the job item carries the shape)."""
        return Sample(id=self.id, modality="bench", task="bench", turns=(), reference="", references=(),
                      format="bench", bench=self.spec(), where=self.id)  # fmt: skip


def cells(
    prompts: Sequence[int],
    gens: Sequence[int],
    depths: Sequence[int],
    backends: Sequence[str],
    threads: Sequence[int | None],
) -> tuple[Cell, ...]:
    """The cross product, settings outermost (so one engine serves a run of cells); threads apply to
    the CPU backend only (other backends get one cell per shape)."""
    out = []
    for b in backends:
        for t in threads if b == "cpu" else (None,):
            for n in gens:
                for d in depths:
                    for p in prompts:
                        out.append(Cell(p, n, d, b, t))
    out = list(dict.fromkeys(out))
    if len(out) > MAX_CELLS:
        raise ConfigError(f"the grid has {len(out)} cells, more than {MAX_CELLS}", where="-p/-n/-d/--backend/--threads",
                          fix="use fewer values per flag, or run the grid in parts")  # fmt: skip
    return tuple(out)


def refused_shapes(grid: Sequence[Cell], limit: int | None) -> list[str]:
    """Each shape that does not fit the engine's token limit, with its numbers ([] when all fit or the
    limit is unknown)."""
    if not limit:
        return []
    seen = {}
    for c in grid:
        if c.tokens > limit:
            seen[(c.n_depth, c.n_prompt, c.n_gen)] = (
                f"d{c.n_depth} + p{c.n_prompt} + n{c.n_gen} = {c.tokens} tokens > the limit of {limit}"
            )
    return list(seen.values())
