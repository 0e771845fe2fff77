"""Two runs side by side (B against A), on the samples both ran: a record, then its text. Pure.

Convention, everywhere: delta = B − A in the figure's unit, and the change relative to A in %.
A regression is a lower pass rate, or a latency/speed/memory figure more than TOLERANCE_PCT worse.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .combine import percentile
from .types import RunReport

TOLERANCE_PCT = 5.0


@dataclass(frozen=True)
class Figure:
    field: str
    label: str
    unit: str
    fmt: str
    higher_is_better: bool


FIGURES = (
    Figure("pass_rate_pct", "Pass", "%", "{:.1f}", True),
    Figure("ttft_ms_p50", "TTFT p50", "ms", "{:.1f}", False),
    Figure("prefill_tps_p50", "Prefill p50", "tok/s", "{:.0f}", True),
    Figure("decode_tps_p50", "Decode p50", "tok/s", "{:.1f}", True),
    Figure("peak_rss_mb", "Peak RSS", "MB", "{:.0f}", False),
)


@dataclass(frozen=True)
class FigureDelta:
    figure: Figure
    a: float | None
    b: float | None

    @property
    def delta(self) -> float | None:
        return None if self.a is None or self.b is None else self.b - self.a

    @property
    def pct(self) -> float | None:
        return None if self.delta is None or not self.a else 100.0 * self.delta / abs(self.a)

    @property
    def regression(self) -> bool:
        if self.delta is None or self.delta == 0:
            return False
        worse = self.delta < 0 if self.figure.higher_is_better else self.delta > 0
        if self.figure.field == "pass_rate_pct":
            return worse
        return worse and (self.pct is None or abs(self.pct) > TOLERANCE_PCT)

    def text(self) -> str:
        f = self.figure
        a = "–" if self.a is None else f.fmt.format(self.a)
        b = "–" if self.b is None else f.fmt.format(self.b)
        if self.delta is None:
            return f"{a} → {b}"
        pct = f", {self.pct:+.1f}%" if self.pct is not None and f.unit != "%" else ""
        return f"{a} → {b} ({self.delta:+.{1 if '.1f' in f.fmt else 0}f}{pct})"


@dataclass(frozen=True)
class DeviceDelta:
    device: str
    common: int  # samples both runs have for this device
    figures: tuple[FigureDelta, ...]
    to_fail: tuple[str, ...]  # passed in A, fail in B
    to_pass: tuple[str, ...]

    @property
    def regressions(self) -> int:
        return sum(f.regression for f in self.figures) + len(self.to_fail)


@dataclass(frozen=True)
class Comparison:
    run_a: str
    run_b: str
    warnings: tuple[str, ...]
    common_samples: int
    devices: tuple[DeviceDelta, ...]  # regressions first
    only_a: tuple[str, ...] = ()  # devices in one run only
    only_b: tuple[str, ...] = ()


def _figures(report: RunReport, device: str, ids: set[str]) -> dict[str, float | None]:
    cells = [s.cells[device] for s in report.samples if s.id in ids and device in s.cells]
    scored = [c for c in cells if c.passed is not None]
    ok = [c for c in cells if c.status == "ok"]
    return {
        "pass_rate_pct": round(100.0 * sum(bool(c.passed) for c in scored) / len(scored), 2)
        if scored
        else None,
        "ttft_ms_p50": percentile([c.ttft_ms for c in ok if c.ttft_ms is not None], 50),
        "prefill_tps_p50": percentile([c.prefill_tps for c in ok if c.prefill_tps], 50),
        "decode_tps_p50": percentile([c.decode_tps for c in ok if c.decode_tps], 50),
        "peak_rss_mb": max((c.peak_rss_mb for c in cells if c.peak_rss_mb is not None), default=None),
    }


def compare_runs(a: RunReport, b: RunReport) -> Comparison:
    ids_a = [s.id for s in a.samples]
    ids_b = {s.id for s in b.samples}
    common = {i for i in ids_a if i in ids_b}
    warnings = []
    if a.stamp.model_sha256 != b.stamp.model_sha256:
        warnings.append(
            f"the runs used different models ({a.stamp.model_sha256[:12] or '?'} vs "
            f"{b.stamp.model_sha256[:12] or '?'}): differences are the model's, not only the devices'"
        )
    if a.stamp.dataset_sha256 != b.stamp.dataset_sha256 or set(ids_a) != ids_b:
        warnings.append(
            f"the runs used different samples ({len(ids_a)} vs {len(ids_b)}): comparing the "
            f"{len(common)} they share only"
        )
    names_a = [r.device for r in a.devices]
    names_b = [r.device for r in b.devices]
    rows = []
    for name in [n for n in names_a if n in names_b]:
        fa, fb = _figures(a, name, common), _figures(b, name, common)
        by_id_a = {s.id: s.cells.get(name) for s in a.samples if s.id in common}
        by_id_b = {s.id: s.cells.get(name) for s in b.samples if s.id in common}
        order = [i for i in ids_a if i in common]
        to_fail = tuple(
            i
            for i in order
            if (x := by_id_a.get(i)) and x.passed and (y := by_id_b.get(i)) and y.passed is False
        )
        to_pass = tuple(
            i
            for i in order
            if (x := by_id_a.get(i)) and x.passed is False and (y := by_id_b.get(i)) and y.passed
        )
        n = sum(1 for i in order if by_id_a.get(i) and by_id_b.get(i))
        rows.append(
            DeviceDelta(
                name, n, tuple(FigureDelta(f, fa[f.field], fb[f.field]) for f in FIGURES), to_fail, to_pass
            )
        )
    rows.sort(key=lambda d: (-d.regressions, d.figures[0].delta or 0.0))
    return Comparison(
        a.run_id,
        b.run_id,
        tuple(warnings),
        len(common),
        tuple(rows),
        tuple(n for n in names_a if n not in names_b),
        tuple(n for n in names_b if n not in names_a),
    )


def comparison_lines(c: Comparison) -> Sequence[str]:
    """The flips and the devices in one run only, as plain lines (after the table)."""
    out = []
    for d in c.devices:
        if d.to_fail:
            out.append(
                f"{d.device}: {len(d.to_fail)} sample(s) passed in A and fail in B: {', '.join(d.to_fail)}"
            )
        if d.to_pass:
            out.append(
                f"{d.device}: {len(d.to_pass)} sample(s) failed in A and pass in B: {', '.join(d.to_pass)}"
            )
    if c.only_a:
        out.append(f"only in {c.run_a}: {', '.join(c.only_a)}")
    if c.only_b:
        out.append(f"only in {c.run_b}: {', '.join(c.only_b)}")
    return out
