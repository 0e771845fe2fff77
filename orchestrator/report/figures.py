"""The figures behind each chart, as plain rows: the charts draw them, report.md prints them. Pure."""

from __future__ import annotations

from dataclasses import dataclass

from ..catalogue import DISTRIBUTION, ENERGY_CHART, measures
from .combine import percentile
from .types.run_report import RunReport

# (SampleCell field, heading, unit) of each measure the distribution and the energy tables show
DISTRIBUTIONS = tuple((m.name, m.heading, m.unit) for m in measures(DISTRIBUTION))
ENERGY = tuple((m.name, m.heading, m.unit) for m in measures(ENERGY_CHART))


@dataclass(frozen=True)
class Table:
    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""


def series(report: RunReport, device: str, field: str, ok_only: bool = False) -> list[float]:
    """One figure of a device's samples in run order (samples without it are left out)."""
    out = []
    for s in report.samples:
        c = s.cells.get(device)
        if c is None or (ok_only and c.status != "ok"):
            continue
        v = getattr(c, field)
        if v is not None:
            out.append(float(v))
    return out


def _f(v: float | None, fmt: str = "{:.1f}") -> str:
    return "–" if v is None else fmt.format(v)


def latency_table(
    report: RunReport, fields=DISTRIBUTIONS, title="Latency and speed distributions (ok samples)"
) -> Table:
    headers = ["Device"]
    for _, label, unit in fields:
        headers += [f"{label} p10 ({unit})", f"{label} p50 ({unit})", f"{label} p90 ({unit})"]
    rows = []
    for r in report.devices:
        row = [r.device]
        for field, _, _ in fields:
            xs = series(report, r.device, field, ok_only=True)
            row += [_f(percentile(xs, q), "{:.2f}" if fields is ENERGY else "{:.1f}") for q in (10, 50, 90)]
        rows.append(tuple(row))
    return Table(title, tuple(headers), tuple(rows))


def energy_table(report: RunReport) -> Table | None:
    """The energy chart's table; None when no device reported a trusted energy figure."""
    if not any(series(report, r.device, "energy_j", ok_only=True) for r in report.devices):
        return None
    t = latency_table(
        report, ENERGY, "Energy per sample and per generated token (ok samples, trusted readings)"
    )
    return Table(t.title, t.headers, t.rows, "whole device while the sample ran, no idle baseline subtracted")


def memory_table(report: RunReport) -> Table:
    rows = tuple(
        (r.device, _f(r.peak_rss_mb, "{:.0f}"), _f(r.peak_file_mb, "{:.0f}"), _f(r.peak_anon_mb, "{:.0f}"))
        for r in report.devices
    )
    return Table(
        "Peak memory per device",
        ("Device", "Peak RSS (MB)", "File-backed (MB)", "Anonymous (MB)"),
        rows,
        "file-backed: mmapped weights (RssFile); anonymous: heap, KV cache (RssAnon); – where not reported",
    )


def over_run_table(report: RunReport) -> Table:
    rows = []
    for r in report.devices:
        mem = series(report, r.device, "peak_rss_mb")
        temp = series(report, r.device, "thermal_c")
        rows.append(
            (
                r.device,
                str(len(mem)),
                _f(mem[0] if mem else None, "{:.0f}"),
                _f(mem[-1] if mem else None, "{:.0f}"),
                _f(max(mem) if mem else None, "{:.0f}"),
                _f(temp[0] if temp else None),
                _f(temp[-1] if temp else None),
                _f(max(temp) if temp else None),
            )
        )
    return Table(
        "Memory and temperature over the run (per sample, in run order)",
        ("Device", "Samples", "RSS first (MB)", "RSS last (MB)", "RSS max (MB)", "Temp first (°C)",
         "Temp last (°C)", "Temp max (°C)"),
        tuple(rows),
        "temperature: hottest thermal zone (boards, host) or battery (phones); – where no sensor is readable",
    )  # fmt: skip


ENERGY_NOTE = "Energy per sample: no device of this run reported a trusted power reading."
