"""The text of the report's cells, shared by every view (md, html, terminal): a device's figures with
their intervals, the best value per column, the settings, modality and status cells. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .fidelity_views import summary_cell
from .paired import speedup
from .types import COLUMNS, Column, DeviceRow, RunReport, SampleCell

MODALITY_ORDER = ("image", "audio", "text", "multi_turn", "combination", "structured_output", "tool_call")
# which way is better, per column that has one (the best value per column is marked)
HIGHER_IS_BETTER = {"pass_rate_pct": True, "strict_pass_rate_pct": True, "init_ms": False, "ttft_ms_p50": False,
                    "ttft_ms_p90": False, "prefill_tps_p50": True, "decode_tps_p50": True, "peak_rss_mb": False,
                    "energy_j_p50": False, "energy_mj_per_token_p50": False, "speedup": True}  # fmt: skip
SPEEDUP = Column("speedup", "Speed-up", "x", "{:.2f}")


@dataclass(frozen=True)
class Cell:
    text: str
    best: bool = False


def header(c: Column) -> str:
    return f"{c.label} ({c.unit})" if c.unit else c.label


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
    out = {report.baseline: (1.0, None, None)} if report.paired else {}
    for p in report.paired:
        s = speedup(p)
        if s is not None:
            out[p.b] = s
    return out


def _best(values: list[float | None], higher: bool) -> float | None:
    xs = [v for v in values if v is not None]
    if len(xs) < 2 or len(set(xs)) < 2:
        return None  # one device, or all equal: nothing to mark
    return max(xs) if higher else min(xs)


TERMINAL_FIELDS = frozenset({"device", "backend", "backend_requested", "threads", "runner_kind", "max_output_tokens",
                             "samples", "pass_rate_pct", "strict_pass_rate_pct", "ttft_ms_p50", "decode_tps_p50",
                             "peak_rss_mb", "energy_j_p50"})  # fmt: skip


SETTINGS = ("hardware", "soc", "backend", "backend_requested", "threads", "runner_kind", "max_output_tokens",
            "quantization", "peak_method", "mem_sample_ms")  # fmt: skip


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


def device_table(report: RunReport, only: frozenset[str] | None = None) -> tuple[list[str], list[list[Cell]]]:
    """The "which device?" table: a row per device with its settings, each figure with its 95%
    interval, the best value per column marked, the speed-up against the baseline, the status."""
    rows = report.devices
    shared = {f for f, _ in shared_settings(report)}
    cols = [c for c in visible_columns(rows) if (only is None or c.field in only) and c.field not in shared]
    speed = _speedups(report)
    values = {c.field: [getattr(r, c.field) for r in rows] for c in cols}
    values["speedup"] = [speed.get(r.device, (None,))[0] for r in rows]
    render = {c.field: c.render for c in cols} | {"speedup": SPEEDUP.render}
    best = {}  # field -> the best value as shown; none when every device shows the same
    for f, v in values.items():
        b = _best(v, HIGHER_IS_BETTER[f]) if f in HIGHER_IS_BETTER else None
        if b is not None and len({render[f](x) for x in v if x is not None}) > 1:
            best[f] = render[f](b)
    headers = [header(c) for c in cols]
    if speed:
        headers.append(f"Speed-up vs {report.baseline} (x)")
    fidelity = {f.device: f for f in report.fidelity.devices} if report.fidelity else {}
    if fidelity:
        headers.append(f"Fidelity vs {report.fidelity.reference}")
    headers += ["Card-only passes", "Status"]
    out = []
    for i, r in enumerate(rows):
        line = []
        for c in cols:
            v = getattr(r, c.field)
            shown = c.render(v) if v is not None else None
            line.append(
                Cell(
                    c.render_ci(v, r.intervals.get(c.field)), shown is not None and shown == best.get(c.field)
                )
            )
        if speed:
            s = speed.get(r.device)
            if s is None:
                line.append(Cell("–"))
            elif r.device == report.baseline:
                line.append(Cell("1.00 (baseline)", best.get("speedup") == SPEEDUP.render(1.0)))
            else:
                ci = (s[1], s[2]) if s[1] is not None and s[2] is not None else None
                line.append(Cell(SPEEDUP.render_ci(s[0], ci), SPEEDUP.render(s[0]) == best.get("speedup")))
        if fidelity:
            f = fidelity.get(r.device)
            line.append(Cell(summary_cell(f) if f is not None else "–"))
        line.append(Cell(f"{len(r.card_only)} of {r.strict_scored}" if r.strict_scored else "–"))
        line.append(Cell(status_cell(r) if not r.error else f"failed ({status_cell(r)})"))
        out.append(line)
    return headers, out
