"""A bench's figures: every repetition of every cell on every device, taken into one record per
(device, cell) with mean, sd and 95% interval per figure (llama-bench's rows are made from it: rows.py).

Pure. Rows are a device's outcome's (bench/finish.py): each cell's first repetition (results.jsonl)
and the others (`ID@r2`..., repeats.jsonl); the uncounted warm-ups are not passed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from android_runner.contract import SampleResult

from .. import catalogue
from ..catalogue import OLD_BENCH_JSON, SPEED, Measure, outside_names
from ..measure import base_id
from ..stats import mean_t_interval
from .grid import Cell


@dataclass(frozen=True)
class Figure:
    """One figure over a cell's repetitions: every value kept, mean, sample sd, Student-t 95% interval."""

    samples: tuple[float, ...]

    @property
    def mean(self) -> float | None:
        return sum(self.samples) / len(self.samples) if self.samples else None

    @property
    def sd(self) -> float | None:
        if len(self.samples) < 2:
            return None
        m = self.mean or 0.0
        return math.sqrt(sum((x - m) ** 2 for x in self.samples) / (len(self.samples) - 1))

    @property
    def interval(self) -> tuple[float, float] | None:
        """Student's t interval of the mean, its low end clipped at 0 (every bench figure is >= 0)."""
        ci = mean_t_interval(self.samples)
        return (max(0.0, ci[0]), ci[1]) if ci else None

    def to_json(self) -> dict[str, Any]:
        ci = self.interval
        return {
            "mean": self.mean,
            "sd": self.sd,
            "ci95": list(ci) if ci else None,
            "samples": list(self.samples),
        }


def _figure(rows: Iterable[SampleResult], measure: Measure) -> Figure:
    return Figure(tuple(float(v) for r in rows if (v := measure.cell(r)) is not None))


def bench_measures() -> tuple[Measure, ...]:
    """The catalogue's measures a bench shows (`Measure.bench`), in catalogue order."""
    return tuple(m for m in catalogue.MEASURES if m.bench)


def _counted(m: Measure, c: Cell) -> bool:
    """A cell's measure counts: prefill always, a tg measure when the cell decodes."""
    return bool(c.n_gen) or (m.bench == SPEED and m.bench_test == "pp")


@dataclass(frozen=True)
class CellResult:
    """One cell on one device."""

    device: str
    cell: Cell
    backend: str  # what ran ('' when nothing did)
    repetitions: int  # ok repetitions, the figures' sample size
    errors: tuple[str, ...]  # each failed repetition's error
    figures: Mapping[str, Figure]  # catalogue measure name -> over the ok repetitions (energy: trusted ones)
    init_ms: float | None  # the load of this cell's engine
    engine_load: int | None  # 1: the device's first (cold) load; later: a reload for other settings
    peak_rss_mb: float | None  # the largest of the repetitions'
    threads_ran: int | None = None  # CPU threads the runtime ran with (android_runner/threads.py)
    threads_from: str = ""  # how that is known: counted | asked | runtime default
    energy_untrusted: str = ""  # why rows' energy was left out ('' when none was)
    asked: int = 0  # repetitions the bench asked of the cell (-r, or --sustain's passes); 0: not known
    decode_bound_ts: float | None = None  # the device's memory-bandwidth bound on its decode (decode_bound.py)

    def to_json(self) -> dict[str, Any]:
        return {
            "device": self.device, "cell": self.cell.id, **self.cell.spec(), "backend_ran": self.backend,
            "repetitions": self.repetitions, "repetitions_asked": self.asked, "errors": list(self.errors),
            **{m.name: self.figure(m.name).to_json() for m in bench_measures()}, "init_ms": self.init_ms,
            "engine_load": self.engine_load, "peak_rss_mb": self.peak_rss_mb, "threads_ran": self.threads_ran,
            "threads_from": self.threads_from, "energy_untrusted": self.energy_untrusted, "decode_bound_ts": self.decode_bound_ts,
        }  # fmt: skip

    def figure(self, name: str) -> Figure:
        """A measure over the repetitions (no samples when the cell does not count it)."""
        return self.figures.get(name) or Figure(())


def read_cells(bench: Mapping[str, Any]) -> list[dict[str, Any]]:
    """bench.json's cells under the catalogue's names (a file an older edgefarm wrote included)."""
    out = []
    for c in bench.get("cells") or ():
        cell = dict(c)
        for o in outside_names(OLD_BENCH_JSON).values():
            if o.outside in cell and o.name not in cell:
                cell[o.name] = cell.pop(o.outside)
        out.append(cell)
    return out


def cell_results(
    device: str, grid: Sequence[Cell], rows: Iterable[SampleResult], asked: int = 0
) -> list[CellResult]:
    """A device's rows (first runs and repeats; warm-ups are not passed) -> one record per cell;
    `asked`: the repetitions each cell was to run (a cell with none is one an interruption left)."""
    by_cell: dict[str, list[SampleResult]] = {}
    for r in rows:
        by_cell.setdefault(base_id(r.id), []).append(r)
    out = []
    for c in grid:
        got = by_cell.get(c.id, [])
        ok = [r for r in got if r.status == "ok"]
        untrusted = sorted({r.energy_unreliable for r in ok if r.energy_unreliable})
        first = ok[0] if ok else None
        peaks = [r.peak_rss_mb for r in ok if r.peak_rss_mb is not None]
        out.append(CellResult(
            device=device, cell=c, backend=first.backend if first else "", repetitions=len(ok),
            errors=tuple(f"{r.status}: {r.error}" for r in got if r.status != "ok"),
            figures={m.name: _figure(ok, m) for m in bench_measures() if _counted(m, c)},
            init_ms=first.init_ms if first else None, engine_load=first.engine_load if first else None,
            peak_rss_mb=max(peaks) if peaks else None,
            threads_ran=first.threads_ran if first else None, threads_from=first.threads_from if first else "",
            energy_untrusted="; ".join(untrusted),
            asked=asked,
        ))  # fmt: skip
    return out
