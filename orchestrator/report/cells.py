"""The text of the report's cells, shared by every view (md, html, terminal): a device's figures with
their intervals, the best value per column, the settings, modality and status cells. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .. import catalogue
from ..catalogue import FIGURE, FIGURES, HIGHER_IS_BETTER, Column, figures
from .best import BEST, TIED, Entry
from .fidelity_views import summary_cell
from .paired import speedup
from .types.device_row import COLUMNS, DeviceRow
from .types.run_report import RunReport
from .types.sample_row import SampleCell
from .verdict import run_marks

MODALITY_ORDER = ("image", "audio", "text", "multi_turn", "combination", "structured_output", "tool_call")
SPEEDUP = FIGURE["speedup"].column
BEST_NOTE = (
    "★ best, tied: the verdict of the paired comparison on the same samples (the lines under the table) for "
    "pass rates, time per sample, speed-up, TTFT, prefill, decode and energy; for the other figures, its 95% "
    "interval (in parentheses) clear of every other device's. Tied: the leader and the devices it cannot be "
    "told from. A device that did not run every sample is never marked, nor the speed-up's baseline"
)


@dataclass(frozen=True)
class Cell:
    """A table cell: the value as shown, its 95% interval `(lo–hi)` ('' without) and its mark (BEST:
    clear of every other device; TIED: the leader and the devices it overlaps; '' neither)."""

    value: str
    interval: str = ""
    mark: str = ""

    @property
    def best(self) -> bool:
        return self.mark == BEST

    @property
    def text(self) -> str:
        """The value with its interval, `12.3 (11.8–13.1)`."""
        return f"{self.value} {self.interval}" if self.interval else self.value

    def marked(self, star: str = "★") -> str:
        """The text with its mark: `12.3 (11.8–13.1) ★` / `… tied`."""
        return self.text + (f" {star}" if self.mark == BEST else " tied" if self.mark == TIED else "")


def header(c: Column) -> str:
    return c.header


def visible_columns(rows: Sequence[DeviceRow]) -> list[Column]:
    """Hide columns empty on every device (e.g. SoC when only this host ran)."""
    return [c for c in COLUMNS if any(getattr(r, c.field) not in (None, "") for r in rows)]


def modalities(report: RunReport) -> list[str]:
    seen = {m for r in report.devices for m in r.by_modality}
    return [m for m in MODALITY_ORDER if m in seen] + sorted(seen - set(MODALITY_ORDER))


def mod_cell(row: DeviceRow, mod: str) -> str:
    m = row.by_modality.get(mod)
    if not m:
        return "–"
    return f"{m.get('passed', 0)}/{m.get('total', 0)}"


def status_cell(row: DeviceRow) -> str:
    return ", ".join(f"{k} {v}" for k, v in row.status_counts.items()) or "–"


def sample_cell(cell: SampleCell | None) -> str:
    """✓/✗/· (card), the strict check when it differs, the status when not ok, the TTFT."""
    if cell is None:
        return ""
    mark = {True: "✓", False: "✗", None: "·"}[cell.passed]
    if cell.passed and cell.strict_passed is False:
        mark += " (strict ✗)"
    ttft = f" {cell.ttft_ms:.0f} ms" if cell.ttft_ms is not None else ""
    text = f"{mark} {cell.status}{ttft}" if cell.status != "ok" else f"{mark}{ttft}"
    return text + (" (stand-in)" if cell.stood_in else "") + (f" (on {cell.ran_on})" if cell.ran_on else "")


def _speedups(report: RunReport) -> dict[str, tuple[float, float | None, float | None]]:
    out = {report.baseline: (1.0, 1.0, 1.0)} if report.paired else {}
    for p in report.paired:
        s = speedup(p)
        if s is not None:
            out[p.b] = s
    return out


# the "which device?" table's figures, the decisive ones first (the compact table: html, terminal)
DECISIVE = tuple(f.field for f in figures(catalogue.DECISIVE))
# columns of the compact table after the figures: what a device is (each only when devices differ)
IDENTITY = ("peak_rss_mb", "hardware", "soc", "runner_kind", "backend", "backend_requested", "threads",
            "max_output_tokens", "quantization")  # fmt: skip
SETTINGS = ("hardware", "soc", "backend", "backend_requested", "threads", "runner_kind", "max_output_tokens",
            "quantization", "peak_method", "mem_sample_ms", "figures_over")  # fmt: skip


def shared_settings(report: RunReport) -> list[tuple[str, str]]:
    """(field, "Label value") of the settings every device shares, said once above the table instead
    of a column repeating it (with two devices or more; one device keeps its columns)."""
    rows = report.devices
    if len(rows) < 2:
        return []
    out = []
    for c in COLUMNS:
        if c.field in SETTINGS:
            values = {c.render(getattr(r, c.field)) for r in rows}
            if len(values) == 1 and (v := values.pop()) != "–":
                out.append((c.field, f"{c.label} {v}{' ' + c.unit if c.unit else ''}"))
    return out


def status_text(row: DeviceRow) -> str:
    """The status counts; `interrupted: 100/200` first for a device that did not run every sample."""
    text = status_cell(row) if not row.error else f"failed ({status_cell(row)})"
    return "; ".join(x for x in (row.partial, row.unsettled, text) if x)


def _ci(c: Column, interval: tuple[float, float] | None) -> str:
    return f"({c.render(interval[0])}–{c.render(interval[1])})" if interval is not None else ""


def device_table(report: RunReport, wide: bool = False) -> tuple[list[str], list[list[Cell]]]:
    """The "which device?" table: a row per device, each figure with its 95% interval and its mark
    (best.py), the speed-up against the baseline, the status. Compact (default): the device, the
    decisive figures (DECISIVE), peak memory, what differs between the devices (IDENTITY), the status;
    the rest is in `device_details`. `wide`: every column (report.md, `--wide`)."""
    rows = report.devices
    shared = {f for f, _ in shared_settings(report)}
    visible = [c for c in visible_columns(rows) if c.field not in shared]
    speed = _speedups(report)
    by_field = {c.field: c for c in visible} | ({"speedup": SPEEDUP} if speed else {})
    if wide:
        order = [c.field for c in visible]
        order.insert(order.index("sample_ms_p50") + 1 if "sample_ms_p50" in order else len(order), "speedup")
    else:
        order = ["device", *DECISIVE, *IDENTITY]
    cols = [by_field[f] for f in order if f in by_field]
    values = {c.field: [_value(r, c.field, speed) for r in rows] for c in cols}
    cell_marks = run_marks(report, {
        c.field: [Entry(v, ci, c.render(v), not r.partial and not r.unsettled and not r.error)
                  for r, (v, ci) in zip(rows, values[c.field], strict=True)]
        for c in cols if c.field in HIGHER_IS_BETTER
    })  # fmt: skip
    headers = [f"Speed-up vs {report.baseline} (x)" if c.field == "speedup" else header(c) for c in cols]
    fidelity = {f.device: f for f in report.fidelity.devices} if report.fidelity else {}
    if fidelity:
        headers.append(f"Fidelity vs {report.fidelity.reference}")
    headers += ["Card-only passes", "Status"] if wide else ["Status"]
    out = []
    for i, r in enumerate(rows):
        line = []
        for c in cols:
            v, ci = values[c.field][i]
            mark = cell_marks.get(c.field, [""] * len(rows))[i]
            if c.field == "speedup" and r.device == report.baseline:
                line.append(Cell("1.00", "(baseline)"))  # against itself: no mark
            else:
                line.append(Cell(c.render(v), _ci(c, ci) if v is not None else "", mark))
        if fidelity:
            f = fidelity.get(r.device)
            line.append(Cell(summary_cell(f) if f is not None else "–"))
        if wide:
            line.append(Cell(f"{len(r.card_only)} of {r.strict_scored}" if r.strict_scored else "–"))
        line.append(Cell(status_text(r)))
        out.append(line)
    return headers, out


def _value(r: DeviceRow, field: str, speed) -> tuple[float | None, tuple[float, float] | None]:
    if field == "speedup":
        s = speed.get(r.device)
        if s is None:
            return None, None
        return s[0], ((s[1], s[2]) if s[1] is not None and s[2] is not None else None)
    return getattr(r, field), r.intervals.get(field)


# figures of the wide table that the compact one leaves to the details line, with how each reads
_DETAILS = (*(f.field for f in figures(catalogue.DETAILS)), "wall_s", "samples")


def device_details(report: RunReport) -> list[tuple[str, list[str]]]:
    """Per device, what the compact table leaves out, as short phrases: the other figures, what they
    are over (--repeat/--warmup), how peak memory was measured, the card-only passes, the stand-in and
    the shards. Settings every device shares are said once above the table instead."""
    shared = {f for f, _ in shared_settings(report)}
    columns = {f.field: f.column for f in FIGURES} | {c.field: c for c in COLUMNS}
    out = []
    for r in report.devices:
        parts = []
        for f in _DETAILS:
            v = getattr(r, f)
            if v is not None and v != "":
                c = columns[f]
                ci = _ci(c, r.intervals.get(f))
                parts.append(
                    f"{c.label} {c.render(v)}{' ' + c.unit if c.unit else ''}{' ' + ci if ci else ''}"
                )
        if r.strict_scored:
            parts.append(f"card-only passes {len(r.card_only)} of {r.strict_scored}")
        if r.figures_over and "figures_over" not in shared:
            parts.append(f"figures over {r.figures_over}")
        memory = []
        if "peak_method" not in shared and r.peak_method:
            memory.append(f"peak by {r.peak_method}")
        if "mem_sample_ms" not in shared and r.mem_sample_ms is not None:
            memory.append(f"memory sampled every {r.mem_sample_ms:g} ms")
        parts += memory
        if r.stand_in:
            parts.append(f"stand-in: {r.stand_in}")
        if r.shards:
            parts.append(f"shards: {r.shards}")
        out.append((r.device, parts))
    return out
