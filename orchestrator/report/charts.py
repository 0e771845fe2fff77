"""The report's charts: matplotlib figures saved as SVG text, inlined into report.html (no JS, offline).

matplotlib is imported here only, and this module only when HTML is rendered, so the CLI starts fast.
Text stays text in the SVG (`svg.fonttype: none`), ids are prefixed per chart so several SVGs can
share one page, and line charts keep at most MAX_POINTS points per device.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Callable

from .combine import percentile
from .figures import DISTRIBUTIONS, ENERGY, series
from .printers import modalities
from .types import RunReport

MAX_POINTS = 200
_RC = {
    "svg.fonttype": "none",
    "svg.hashsalt": "edgefarm",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "font.family": "sans-serif",
}


def _figure(width_in: float, height_in: float, cols: int = 1):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), layout="constrained")
    return fig, fig.subplots(1, cols, squeeze=False)[0]


def _svg(fig, key: str) -> str:
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    buf = io.StringIO()
    FigureCanvasSVG(fig).print_svg(buf, metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    text = text[text.index("<svg") :]  # no XML prolog / doctype inside HTML
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.DOTALL)  # RDF boilerplate
    text = re.sub(r'id="([^"]+)"', rf'id="{key}-\1"', text)
    text = re.sub(r"url\(#([^)]+)\)", rf"url(#{key}-\1)", text)
    return re.sub(r'href="#([^"]+)"', rf'href="#{key}-\1"', text)


def _legend(fig, ax) -> None:
    """One legend to the right of the plot, never over the data."""
    fig.legend(*ax.get_legend_handles_labels(), loc="outside right upper", fontsize=7, frameon=False)


def _colors(n: int) -> list:
    from matplotlib import colormaps

    cmap = colormaps["tab20" if n > 10 else "tab10"]
    return [cmap(i % cmap.N) for i in range(n)]


def _in_run_order(report: RunReport, device: str, field: str) -> list[float]:
    """A figure per sample position (NaN where the sample has none, e.g. a crash: a gap in the line)."""
    nan = float("nan")
    out = []
    for s in report.samples:
        c = s.cells.get(device)
        v = getattr(c, field) if c is not None else None
        out.append(nan if v is None else float(v))
    return out


def _thin(xs: list[float]) -> tuple[list[int], list[float]]:
    """At most MAX_POINTS points: the max of each bucket (peaks are what matter in memory/heat)."""
    if len(xs) <= MAX_POINTS:
        return list(range(1, len(xs) + 1)), xs
    step = len(xs) / MAX_POINTS
    idx, vals = [], []
    for k in range(MAX_POINTS):
        lo, hi = int(k * step), max(int((k + 1) * step), int(k * step) + 1)
        bucket = [x for x in xs[lo:hi] if not math.isnan(x)]
        idx.append(lo + 1)
        vals.append(max(bucket) if bucket else float("nan"))
    return idx, vals


def pass_by_modality(report: RunReport) -> str | None:
    mods = modalities(report)
    devices = [r for r in report.devices if r.by_modality]
    if not mods or not devices:
        return None
    fig, (ax,) = _figure(min(11, 2 + 0.9 * len(mods) + 0.1 * len(mods) * len(devices)), 3.2)
    width = 0.8 / len(devices)
    for i, (r, color) in enumerate(zip(devices, _colors(len(devices)))):
        pct = [
            100.0 * m["passed"] / m["total"] if (m := r.by_modality.get(mod)) and m.get("total") else 0.0
            for mod in mods
        ]
        ax.bar(
            [j + (i - (len(devices) - 1) / 2) * width for j in range(len(mods))],
            pct,
            width,
            label=r.device,
            color=color,
        )
    ax.set_xticks(range(len(mods)), [m.replace("_", "\n") for m in mods])
    ax.set_ylabel("pass rate (%)")
    ax.set_ylim(0, 100)
    _legend(fig, ax)
    return _svg(fig, "pass")


def _boxes(report: RunReport, fields: tuple[tuple[str, str, str], ...], key: str) -> str | None:
    """Per device and field: a box from p25 to p75, a line from p10 to p90, a red tick at the median,
    the min and max as dots. Three collections per axis (not a boxplot artist set per device), which
    keeps a 16-device chart fast to draw and small."""
    from matplotlib.collections import LineCollection

    names = [r.device for r in report.devices]
    data = {f: [series(report, n, f, ok_only=True) for n in names] for f, _, _ in fields}
    if not any(any(xs) for xs in data.values()):
        return None
    fig, axes = _figure(11 if len(fields) > 2 else 8, max(2.4, 0.5 + 0.22 * len(names)), cols=len(fields))
    for ax, (field, label, unit) in zip(axes, fields):
        rows = [
            (y, [percentile(xs, q) for q in (0, 10, 25, 50, 75, 90, 100)])
            for y, xs in enumerate(data[field])
            if xs
        ]
        ax.add_collection(
            LineCollection([[(q[1], y), (q[5], y)] for y, q in rows], colors="#555", linewidths=1, zorder=1)
        )
        ax.barh(
            [y for y, _ in rows],
            [q[4] - q[2] for _, q in rows],
            left=[q[2] for _, q in rows],
            height=0.55,
            color="#9ecae1",
            edgecolor="#3182bd",
            zorder=2,
            linewidth=0.8,
        )
        ax.add_collection(
            LineCollection(
                [[(q[3], y - 0.3), (q[3], y + 0.3)] for y, q in rows],
                colors="#d62728",
                linewidths=1.5,
                zorder=3,
            )
        )
        ax.plot(
            [q[0] for _, q in rows] + [q[6] for _, q in rows],
            [y for y, _ in rows] * 2,
            "o",
            color="#555",
            markersize=2,
            linestyle="none",
        )
        ax.set_yticks(range(len(names)), names if ax is axes[0] else [""] * len(names))
        ax.set_ylim(len(names) - 0.5, -0.5)
        ax.set_xlabel(f"{label} ({unit})")
        ax.autoscale_view(scaley=False)
    return _svg(fig, key)


def distributions(report: RunReport) -> str | None:
    return _boxes(report, DISTRIBUTIONS, "dist")


def energy(report: RunReport) -> str | None:
    return _boxes(report, ENERGY, "energy")


def memory(report: RunReport) -> str | None:
    rows = [r for r in report.devices if r.peak_rss_mb is not None]
    if not rows:
        return None
    fig, (ax,) = _figure(7, max(1.6, 0.5 + 0.25 * len(rows)))
    y = list(range(len(rows)))
    split = [r.peak_file_mb is not None and r.peak_anon_mb is not None for r in rows]
    file_mb = [r.peak_file_mb if s else 0.0 for r, s in zip(rows, split)]
    anon_mb = [r.peak_anon_mb if s else 0.0 for r, s in zip(rows, split)]
    total = [0.0 if s else r.peak_rss_mb for r, s in zip(rows, split)]
    ax.barh(y, file_mb, color="#4c78a8", label="file-backed (weights)")
    ax.barh(y, anon_mb, left=file_mb, color="#f58518", label="anonymous (heap, KV cache)")
    if any(total):
        ax.barh(y, total, color="#9d9d9d", label="RSS (no split reported)")
    ax.set_yticks(y, [r.device for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel("peak memory (MB)")
    _legend(fig, ax)
    return _svg(fig, "mem")


def over_the_run(report: RunReport) -> str | None:
    names = [r.device for r in report.devices]
    mem = {n: _in_run_order(report, n, "peak_rss_mb") for n in names if series(report, n, "peak_rss_mb")}
    temp = {n: _in_run_order(report, n, "thermal_c") for n in names if series(report, n, "thermal_c")}
    has_temp = bool(temp)
    if not mem:
        return None
    fig, axes = _figure(11, 2.8, cols=2 if has_temp else 1)
    for n, color in zip(names, _colors(len(names))):
        if n in mem:
            axes[0].plot(*_thin(mem[n]), color=color, linewidth=1, label=n)
        if n in temp:
            axes[1].plot(*_thin(temp[n]), color=color, linewidth=1, label=n)
    axes[0].set_xlabel("sample (run order)")
    axes[0].set_ylabel("peak RSS (MB)")
    _legend(fig, axes[0])
    if has_temp:
        axes[1].set_xlabel("sample (run order)")
        axes[1].set_ylabel("temperature (°C)")
    return _svg(fig, "run")


CHARTS: tuple[tuple[str, str, Callable[[RunReport], str | None]], ...] = (
    ("chart-pass", "Pass rate per modality and device", pass_by_modality),
    (
        "chart-dist",
        "TTFT, prefill and decode speed per device (ok samples): box p25–p75, line p10–p90, red tick the median, dots min and max",
        distributions,
    ),
    ("chart-mem", "Peak memory per device", memory),
    ("chart-run", "Memory and temperature over the run", over_the_run),
    ("chart-energy", "Energy per sample and per generated token (ok samples with a trusted reading)", energy),
)


def render_charts(report: RunReport) -> list[tuple[str, str, str | None]]:
    """(html id, title, svg or None when the run has no such figures) for every chart."""
    import matplotlib

    with matplotlib.rc_context(_RC):
        return [(key, title, draw(report)) for key, title, draw in CHARTS]
