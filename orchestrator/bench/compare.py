"""`edgefarm compare RUN_A RUN_B` of two bench runs: cell by cell (same device, same cell id), B against
A as the ratio of mean speeds with a 95% interval.

Pure. Two runs' repetitions are independent samples (not pairs), so the interval is Welch's on the
log of the ratio (the delta method: se² = sd_A²/(n_A·mean_A²) + sd_B²/(n_B·mean_B²), Welch-Satterthwaite
degrees of freedom): "1.00 (0.97-1.04)" holds 1, no significant difference.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..catalogue import SPEED
from ..errors import ConfigError
from ..stats import t_quantile_975
from .results import bench_measures, read_cells

# the catalogue's bench speeds (Measure.bench SPEED): measure name, column label
FIGURES = tuple((m.name, f"{m.label.lower()} t/s") for m in bench_measures() if m.bench == SPEED)


@dataclass(frozen=True)
class SpeedRatio:
    ratio: float
    lo: float | None
    hi: float | None

    @property
    def significant(self) -> bool:
        return self.lo is not None and self.hi is not None and (self.hi < 1.0 or self.lo > 1.0)

    def text(self) -> str:
        if self.lo is None or self.hi is None:
            return f"{self.ratio:.3f} (no interval)"
        return f"{self.ratio:.3f} ({self.lo:.3f}-{self.hi:.3f})" + (" *" if self.significant else "")


def speed_ratio(a: Mapping[str, Any], b: Mapping[str, Any]) -> SpeedRatio | None:
    """B/A of two figures (bench.json's {mean, sd, samples}); None when either has no mean."""
    ma, mb = a.get("mean"), b.get("mean")
    if not ma or not mb:
        return None
    na, nb = len(a.get("samples") or ()), len(b.get("samples") or ())
    sa, sb = a.get("sd"), b.get("sd")
    ratio = mb / ma
    if na < 2 or nb < 2 or sa is None or sb is None:
        return SpeedRatio(ratio, None, None)
    va, vb = (sa / ma) ** 2 / na, (sb / mb) ** 2 / nb
    se = math.sqrt(va + vb)
    if se == 0:
        return SpeedRatio(ratio, ratio, ratio)
    df = (va + vb) ** 2 / ((va**2) / (na - 1) + (vb**2) / (nb - 1)) if va + vb > 0 else na + nb - 2
    half = t_quantile_975(max(1, int(df))) * se
    return SpeedRatio(ratio, ratio * math.exp(-half), ratio * math.exp(half))


@dataclass(frozen=True)
class CellComparison:
    device: str
    cell: str
    ratios: Mapping[str, SpeedRatio | None]  # figure -> B/A
    reps: tuple[int, int]


@dataclass(frozen=True)
class BenchComparison:
    run_a: str
    run_b: str
    cells: tuple[CellComparison, ...]
    only_a: tuple[str, ...]  # "device cell" in A only
    only_b: tuple[str, ...]
    differences: tuple[str, ...]  # model or token limit that differ


def _shape(c: Mapping[str, Any]) -> tuple:
    return (c["device"], c["n_prompt"], c["n_gen"], c["n_depth"])


def pairs(a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]]) -> list[tuple[Mapping, Mapping]]:
    """Cells of A and B that measure the same thing: the same device and cell id; then, among the rest,
    the same device and shape where each run has exactly one such cell (settings compared: A on cpu,
    B on gpu)."""
    by_id = {(c["device"], c["cell"]): c for c in b}
    out = [(c, by_id[(c["device"], c["cell"])]) for c in a if (c["device"], c["cell"]) in by_id]
    used_a, used_b = {id(x) for x, _ in out}, {id(y) for _, y in out}
    rest_a = [c for c in a if id(c) not in used_a]
    rest_b = [c for c in b if id(c) not in used_b]
    for c in rest_a:
        same_a = [x for x in rest_a if _shape(x) == _shape(c)]
        same_b = [y for y in rest_b if _shape(y) == _shape(c)]
        if len(same_a) == 1 and len(same_b) == 1:
            out.append((c, same_b[0]))
    return out


def compare_bench(
    a: Mapping[str, Any], b: Mapping[str, Any], names: Sequence[str] = ("A", "B")
) -> BenchComparison:
    """Two bench.json documents, cell by cell."""
    cells_a, cells_b = read_cells(a), read_cells(b)
    matched = pairs(cells_a, cells_b)
    if not matched:
        raise ConfigError("the two bench runs share no cell (same device and shape)", where=f"{names[0]}, {names[1]}",
                          fix="compare bench runs of the same devices and grid")  # fmt: skip
    cells = tuple(
        CellComparison(x["device"], x["cell"] if x["cell"] == y["cell"] else f"{x['cell']} vs {y['cell']}",
                       {f: speed_ratio(x[f], y[f]) for f, _ in FIGURES}, (x["repetitions"], y["repetitions"]))
        for x, y in matched
    )  # fmt: skip
    diffs = []
    if a["model"].get("sha256") != b["model"].get("sha256"):
        diffs.append(f"model {a['model'].get('path')} vs {b['model'].get('path')}")
    seen_a, seen_b = {id(x) for x, _ in matched}, {id(y) for _, y in matched}
    only_a = tuple(f"{c['device']} {c['cell']}" for c in cells_a if id(c) not in seen_a)
    only_b = tuple(f"{c['device']} {c['cell']}" for c in cells_b if id(c) not in seen_b)
    return BenchComparison(names[0], names[1], cells, only_a, only_b, tuple(diffs))


def comparison_text(c: BenchComparison) -> str:
    """The comparison as a Markdown table and notes (the CLI prints it)."""
    head = f"{c.run_a} -> {c.run_b}: B/A of mean speed per cell (95% interval; * the interval excludes 1)\n"
    if c.differences:
        head += "DIFFERENT: " + "; ".join(c.differences) + "\n"
    lines = [head, "| device | cell | reps A/B | " + " | ".join(label for _, label in FIGURES) + " |",
             "|---|---|---|" + "---|" * len(FIGURES)]  # fmt: skip
    for x in c.cells:
        ratios = [x.ratios[f].text() if x.ratios[f] else "-" for f, _ in FIGURES]
        lines.append(f"| {x.device} | {x.cell} | {x.reps[0]}/{x.reps[1]} | " + " | ".join(ratios) + " |")
    for label, keys in (("only in A", c.only_a), ("only in B", c.only_b)):
        if keys:
            lines.append(f"{label}: " + ", ".join(keys))
    return "\n".join(lines) + "\n"
