"""The report's charts, drawn with report/svg.py and inlined into report.html (no JS, offline).

Why SVG is written directly: see svg.py (matplotlib's import cost 0.26 s of CPU on every run). Axes
are robust: a distribution's axis spans its values within Tukey's fences (the boxes' p10-p90
whiskers always inside); values beyond are not drawn and are counted in the axis label; memory axes
start at 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from itertools import pairwise, repeat

from ..catalogue import PER_PASS, measures
from . import svg
from .cells import modalities
from .combine import percentile
from .figures import DISTRIBUTIONS, ENERGY, series
from .types.run_report import RunReport

MAX_POINTS = 200
QUANTILES = (0, 10, 25, 50, 75, 90, 100)  # a box: min and max dots, p10-p90 line, p25-p75 box, median


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
    """Bars of each device's pass rate per modality; None without a scored modality, or when every pass
    rate is 0 (empty axes said nothing: no_chart_note says why instead)."""
    mods = modalities(report)
    devices = [r for r in report.devices if r.by_modality]
    if not mods or not devices or not any(m.get("passed") for r in devices for m in r.by_modality.values()):
        return None
    names, colors = [r.device for r in devices], svg.colors(len(devices))
    xlabels = [m.replace("_", "\n") for m in mods]
    rates = [
        100.0 * m["passed"] / m["total"] for r in devices for m in r.by_modality.values() if m.get("total")
    ]
    ylocs, ylabels = svg.nice_ticks(
        0.0, min(100.0, max(rates, default=0.0)) or 1.0
    )  # from 0 to the highest bar
    left, bottom, legend = svg.left_margin(ylabels, True), svg.bottom_margin(xlabels), svg.legend_width(names)
    slot = max(0.9, svg.widest(xlabels) + 0.15)  # a modality's room: at least its label's
    width = max(
        min(11.0, left + (slot + 0.1 * len(devices)) * len(mods) + legend), left + slot * len(mods) + legend
    )
    height = max(3.2, svg.legend_height(len(names)))
    canvas = svg.Canvas("pass", width, height)
    p = svg.Panel(
        canvas,
        left,
        bottom,
        width - left - legend,
        height - svg.TOP - bottom,
        (-0.5, len(mods) - 0.5),
        (ylocs[0], ylocs[-1]),
    )
    bar, boxes, fills = 0.8 / len(devices), [], []
    for i, (r, color) in enumerate(zip(devices, colors)):
        for j, mod in enumerate(mods):
            m = r.by_modality.get(mod)
            pct = 100.0 * m["passed"] / m["total"] if m and m.get("total") else 0.0
            x = j + (i - len(devices) / 2) * bar
            boxes.append((x, x + bar, 0.0, pct))
            fills.append(color)
    p.rects("bars", boxes, fills)
    p.yticks(ylocs, ylabels, "pass rate (%)")
    p.xticks(range(len(mods)), xlabels)
    p.finish()
    svg.legend(canvas, width - legend + svg.LEGEND_GAP, list(zip(names, colors)))
    return canvas.svg()


def _label(canvas, p, placed: list, x: float, y: float, text: str) -> None:
    """A point's name beside it (right, else left), unless it would cover another name or leave the
    panel: the legend names every point anyway."""
    w, h = svg.text_width_in(text), 1.2 * svg.FONT_PT / 72
    for x0, y0 in (
        (x + 0.08, y + 0.04),
        (x + 0.08, y - 0.04 - h),
        (x - 0.08 - w, y + 0.04),
        (x - 0.08 - w, y - 0.04 - h),
    ):
        box = (x0, y0, x0 + w, y0 + h)
        inside = (
            p.left <= box[0]
            and box[2] <= p.left + p.width
            and p.bottom <= box[1]
            and box[3] <= p.bottom + p.height
        )
        if inside and not any(
            b[0] < box[2] and box[0] < b[2] and b[1] < box[3] and box[1] < b[3] for b in placed
        ):
            placed.append(box)
            canvas.text(box[0], y0 + 0.01, text)
            return


def accuracy_latency(report: RunReport) -> str | None:
    """Which device? One point per device: its pass rate (Wilson 95% interval, vertical bar) against
    its median TTFT (bootstrap 95% interval, horizontal bar). Up and to the left is better."""
    rows = [r for r in report.devices if r.pass_rate_pct is not None and r.ttft_ms_p50 is not None]
    if not rows:
        return None
    names = [r.device for r in rows]
    colors = dict(zip([r.device for r in report.devices], svg.colors(len(report.devices))))
    xs = [v for r in rows for v in (r.ttft_ms_p50, *r.intervals.get("ttft_ms_p50", ()))]
    lo, hi = min(xs), max(xs)
    pad = (hi - lo) * 0.08 or abs(hi) * 0.1 or 1.0
    xlocs, xlabels = svg.fitting_ticks(max(0.0, lo - pad), hi + pad, 4.0)
    ys = [v for r in rows for v in (r.pass_rate_pct, *r.intervals.get("pass_rate_pct", ()))]
    ypad = (max(ys) - min(ys)) * 0.08 or 1.0  # fitted to the rates and their intervals: 2% is not flat
    ylocs, ylabels = svg.nice_ticks(max(0.0, min(ys) - ypad), min(100.0, max(ys) + ypad))
    left, bottom, legend = svg.left_margin(ylabels, True), svg.bottom_margin(xlabels), svg.legend_width(names)
    width, height = max(7.0, left + 5.0 + legend), max(3.4, svg.legend_height(len(names)))
    canvas = svg.Canvas("acc", width, height)
    right = svg.overhang(xlabels[-1]) + legend
    p = svg.Panel(
        canvas, left, bottom, width - left - right, height - svg.TOP - bottom, (xlocs[0], xlocs[-1]),
        (ylocs[0], ylocs[-1]),
    )  # fmt: skip
    placed: list[tuple[float, float, float, float]] = []
    for r in rows:
        c, x, y = colors[r.device], r.ttft_ms_p50, r.pass_rate_pct
        bars = []
        if "ttft_ms_p50" in r.intervals:
            bars.append([(r.intervals["ttft_ms_p50"][0], y), (r.intervals["ttft_ms_p50"][1], y)])
        if "pass_rate_pct" in r.intervals:
            bars.append([(x, r.intervals["pass_rate_pct"][0]), (x, r.intervals["pass_rate_pct"][1])])
        p.lines("intervals", bars, c, 1.5)
        p.dots("points", [(x, y)], c, 9)
        _label(canvas, p, placed, p.x(x), p.y(y), r.device)
    p.xticks(xlocs, xlabels, "TTFT p50 (ms), 95% interval; left is faster")
    p.yticks(ylocs, ylabels, "pass rate (%), 95% interval")
    p.finish()
    svg.legend(canvas, width - legend + svg.LEGEND_GAP, [(n, colors[n]) for n in names], mark="dot")
    return canvas.svg()


def _boxes(report: RunReport, fields: tuple[tuple[str, str, str], ...], key: str) -> str | None:
    """Per device and field: a box from p25 to p75, a line from p10 to p90, a red tick at the median,
    the min and max as dots. A group of each per panel."""
    names = [r.device for r in report.devices]
    quantiles = {}  # field -> [(row, [min, p10, p25, p50, p75, p90, max])] of the devices with figures
    for field, _, _ in fields:
        xs = (sorted(series(report, n, field, ok_only=True)) for n in names)
        quantiles[field] = [(y, [percentile(v, q) for q in QUANTILES]) for y, v in enumerate(xs) if v]
    if not any(quantiles.values()):
        return None
    spans = [_robust_span(report, names, f, quantiles[f]) for f, _, _ in fields]
    left, bottom, plot_h = (
        svg.left_margin(names, False),
        svg.bottom_margin(["0"]),
        max(0.9, svg.ROW * len(names)),
    )
    ticks, plot_w = [], 2.2
    for _ in range(3):  # the ticks that fit the panels, then the panels around those ticks, till they agree
        fitted = [svg.fitting_ticks(lo, hi, plot_w) for lo, hi in spans]
        if fitted == ticks:
            break
        ticks = fitted
        # between two panels: half the first one's last tick label and half the next one's first
        gaps = [svg.overhang(a[1][-1]) + svg.overhang(b[1][0]) + 2 * svg.EDGE for a, b in pairwise(ticks)]
        right = svg.overhang(ticks[-1][1][-1]) + svg.EDGE
        width = max(11.0 if len(fields) > 2 else 8.0, left + sum(gaps) + right + 2.2 * len(fields))
        plot_w = (width - left - sum(gaps) - right) / len(fields)
    canvas = svg.Canvas(key, width, svg.TOP + plot_h + bottom)
    x = left
    for i, ((field, label, unit), (locs, labels), gap) in enumerate(zip(fields, ticks, [*gaps, 0.0])):
        p = svg.Panel(canvas, x, bottom, plot_w, plot_h, (locs[0], locs[-1]), (len(names) - 0.5, -0.5))
        rows = quantiles[field]
        p.lines("whiskers", [[(q[1], y), (q[5], y)] for y, q in rows], "#555555", 1)
        boxes = [(q[2], q[4], y - 0.275, y + 0.275) for y, q in rows]
        p.rects("boxes", boxes, repeat("#9ecae1"), "#3182bd", 0.8)
        p.lines("medians", [[(q[3], y - 0.3), (q[3], y + 0.3)] for y, q in rows], "#d62728", 1.5)
        inside = [(q[k], y) for k in (0, 6) for y, q in rows if locs[0] <= q[k] <= locs[-1]]
        p.dots("extremes", inside, "#555555", 3)
        pooled = [v for n in names for v in series(report, n, field, ok_only=True)]
        beyond = sum(1 for v in pooled if not locs[0] <= v <= locs[-1])
        p.xticks(locs, labels, f"{label} ({unit})" + (f"; {beyond} beyond the axis" if beyond else ""))
        if i == 0:  # the device names, for every panel
            p.yticks(range(len(names)), names)
        p.finish()
        x += plot_w + gap
    return canvas.svg()


def _robust_span(report: RunReport, names, field: str, rows) -> tuple[float, float]:
    """The axis of a distribution panel: the pooled values within Tukey's fences (1.5 IQR beyond the
    quartiles, the box plot's own outlier rule), widened to hold every device's p10-p90 whisker; one
    slow outlier no longer squeezes every box to the left."""
    if not rows:
        return 0.0, 1.0
    pooled = [v for n in names for v in series(report, n, field, ok_only=True)]
    q1, q3 = percentile(pooled, 25), percentile(pooled, 75)
    lo, hi = max(min(pooled), q1 - 1.5 * (q3 - q1)), min(max(pooled), q3 + 1.5 * (q3 - q1))
    return min(lo, *(q[1] for _, q in rows)), max(hi, *(q[5] for _, q in rows))


def distributions(report: RunReport) -> str | None:
    return _boxes(report, DISTRIBUTIONS, "dist")


def energy(report: RunReport) -> str | None:
    return _boxes(report, ENERGY, "energy")


def memory(report: RunReport) -> str | None:
    rows = [r for r in report.devices if r.peak_rss_mb is not None]
    if not rows:
        return None
    names = [r.device for r in rows]
    split = [r.peak_file_mb is not None and r.peak_anon_mb is not None for r in rows]
    file_mb = [r.peak_file_mb if s else 0.0 for r, s in zip(rows, split)]
    anon_mb = [r.peak_anon_mb if s else 0.0 for r, s in zip(rows, split)]
    total = [0.0 if s else r.peak_rss_mb for r, s in zip(rows, split)]
    parts = [
        ("file-backed (weights)", "#4c78a8", [(0.0, f) for f in file_mb]),
        ("anonymous (heap, KV cache)", "#f58518", [(f, f + a) for f, a in zip(file_mb, anon_mb)]),
    ]
    if any(total):
        parts.append(("RSS (no split reported)", "#9d9d9d", [(0.0, t) for t in total]))
    peak = max(max(f + a, t) for f, a, t in zip(file_mb, anon_mb, total)) or 1.0
    locs, labels = svg.fitting_ticks(0.0, peak, 3.0)  # the panel is 3 in or wider
    left, bottom = svg.left_margin(names, False), svg.bottom_margin(labels)
    right = svg.overhang(labels[-1]) + svg.legend_width([label for label, _, _ in parts])
    width, plot_h = max(7.0, left + 3.0 + right), max(0.9, svg.ROW * len(rows))
    canvas = svg.Canvas("mem", width, max(svg.TOP + plot_h + bottom, svg.legend_height(len(parts))))
    p = svg.Panel(
        canvas, left, bottom, width - left - right, plot_h, (locs[0], locs[-1]), (len(rows) - 0.5, -0.5)
    )
    boxes = [
        (x0, x1, y - 0.4, y + 0.4, c) for _, c, spans in parts for y, (x0, x1) in enumerate(spans) if x1 > x0
    ]
    p.rects("bars", [b[:4] for b in boxes], [b[4] for b in boxes])
    p.xticks(locs, labels, "peak memory (MB)")
    p.yticks(range(len(rows)), names)
    p.finish()
    svg.legend(
        canvas, width - right + svg.overhang(labels[-1]) + svg.LEGEND_GAP, [(t, c) for t, c, _ in parts]
    )
    return canvas.svg()


def _same_as(names: list[str], series: dict) -> dict[str, str]:
    """Legend labels: a device whose memory line is another's to within 0.5 MB says so, since the
    later line hides the earlier one (two identical lines looked like one device missing)."""
    out = {}
    for i, n in enumerate(names):
        ys = series[n][1]
        twin = next((m for m in names[:i] if len(series[m][1]) == len(ys) and all(
            (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 0.5 for a, b in zip(series[m][1], ys))), None)  # fmt: skip
        out[n] = f"{n} (same as {twin})" if twin else n
    return out


def over_the_run(report: RunReport) -> str | None:
    names = [r.device for r in report.devices]
    mem = {
        n: _thin(_in_run_order(report, n, "peak_rss_mb")) for n in names if series(report, n, "peak_rss_mb")
    }
    if not mem:
        return None
    temp = {n: _thin(_in_run_order(report, n, "thermal_c")) for n in names if series(report, n, "thermal_c")}
    panels = [(mem, "peak RSS (MB)")] + ([(temp, "temperature (°C)")] if temp else [])
    xlocs, xlabels = svg.fitting_ticks(
        1.0, float(max(len(report.samples), 2)), 3.0, integer=True
    )  # 3 in or wider
    yticks = []
    for d, _ in panels:
        values = [v for _, ys in d.values() for v in ys if not math.isnan(v)]
        # memory from 0 (a 2 MB wobble at 90 MB is not a climb); temperature around its readings
        lo = 0.0 if d is mem else min(values)
        yticks.append(svg.nice_ticks(lo, max(values)))
    shown = [n for n in names if n in mem]  # the legend: the memory panel's lines
    labels = _same_as(shown, mem)
    canvas, plots, legend_x = svg.panel_row("run", yticks, xlocs, xlabels, list(labels.values()), 11.0)
    colors = dict(zip(names, svg.colors(len(names))))
    for (d, ylabel), (ylocs, ylabels), p in zip(panels, yticks, plots):
        for n, (xs, ys) in d.items():
            p.lines("series", [list(zip(xs, ys))], colors[n], 1)
        p.xticks(xlocs, xlabels, "sample (run order)")
        p.yticks(ylocs, ylabels, ylabel)
        p.finish()
    svg.legend(canvas, legend_x, [(labels[n], colors[n]) for n in shown], lines=True)
    return canvas.svg()


def sustained(report: RunReport) -> str | None:
    """--sustain: each per-pass figure of the catalogue (catalogue.PER_PASS) as a % of the device's
    first pass, against the time under load (the passes' ends): a panel per figure, labelled with the
    catalogue's label, a line per device; None without --sustain curves."""
    panels = []
    for m in measures(PER_PASS):
        lines = {}
        for name, c in report.sustain.items():
            passes = [p for p in c.get("passes", ()) if p.get(m.name) is not None]
            if len(passes) >= 2 and passes[0][m.name]:
                first = passes[0][m.name]
                lines[name] = [(float(p["end_s"]), 100.0 * p[m.name] / first) for p in passes]
        if lines:
            panels.append((m, lines))
    if not panels:
        return None
    names = [n for n in report.sustain if any(n in lines for _, lines in panels)]
    plot_w = max(3.0, 6.0 / len(panels))  # one panel 6 in wide, several 3 in each (the page scales an svg)
    xmax = max(x for _, lines in panels for pts in lines.values() for x, _ in pts)
    xlocs, xlabels = svg.fitting_ticks(0.0, xmax, plot_w)
    yticks = [svg.nice_ticks(min(ys), max(ys)) for ys in ([y for pts in lines.values() for _, y in pts]
                                                          for _, lines in panels)]  # fmt: skip
    canvas, plots, legend_x = svg.panel_row("sustain", yticks, xlocs, xlabels, names, plot_w=plot_w)
    colors = dict(zip(names, svg.colors(len(names))))
    for (m, lines), (ylocs, ylabels), p in zip(panels, yticks, plots):
        for n, pts in lines.items():
            p.lines("series", [pts], colors[n], 1.5)
            p.dots("points", pts, colors[n], 4)
        p.xticks(xlocs, xlabels, "time under load (s)")
        p.yticks(ylocs, ylabels, f"{m.label} (% of pass 1)")
        p.finish()
    svg.legend(canvas, legend_x, [(n, colors[n]) for n in names], lines=True)
    return canvas.svg()


CHARTS: tuple[tuple[str, str, Callable[[RunReport], str | None]], ...] = (
    (
        "chart-acc",
        (
            "Which device? Pass rate against median TTFT, one point per device with its 95% intervals "
            "(up and to the left is better)"
        ),
        accuracy_latency,
    ),
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


def no_chart_note(report: RunReport, key: str) -> str:
    """What stands in place of a chart that has nothing to draw."""
    if key == "chart-pass":
        scored = sum(m.get("total") or 0 for r in report.devices for m in r.by_modality.values())
        if scored:
            return f"every pass rate is 0%: none of the {scored} scored samples passed, on any device or modality"
    return "no figures of this kind in this run"


def render_charts(report: RunReport) -> list[tuple[str, str, str | None]]:
    """(html id, title, svg or None when the run has no such figures) for every chart; a title names
    only what its chart shows (no temperature in the title of a run without readings)."""
    out = []
    for key, title, draw in CHARTS:
        if key == "chart-run" and not any(series(report, r.device, "thermal_c") for r in report.devices):
            title = "Memory over the run (no temperature was read)"
        out.append((key, title, draw(report)))
    return out
