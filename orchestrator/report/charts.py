"""The report's charts: matplotlib figures saved as SVG text, inlined into report.html (no JS, offline).

matplotlib is imported here only, and this module only when HTML is rendered, so the CLI starts fast.
Text stays text in the SVG (`svg.fonttype: none`), ids are prefixed per chart so several SVGs can
share one page, and line charts keep at most MAX_POINTS points per device.

A fixed layout drawn with a few artists, for speed: the charts end every run. With Axes and
constrained layout they took 0.22-0.25 s for one device and 0.5 s for 16 (200 samples, a 2-core
host): the layout measured every text of a figure before drawing it, and each Axes built and measured
a dozen artists per tick. Now 35 ms and 90 ms. A chart is a matplotlib Figure of plain artists
laid out in inches (`_Panel`): the margins come from what is known before drawing (the ticks, chosen
here, a few per axis; the longest label, its width estimated high from its characters at the known
font size so a browser's substitute font fits too; the legend, in a right margin of its own); the
spines and tick marks of a panel are one line collection, each tick label one Text, and the bars
or boxes of a chart one collection with a colour per bar.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from itertools import pairwise

from .combine import percentile
from .figures import DISTRIBUTIONS, ENERGY, series
from .printers import modalities
from .types import RunReport

MAX_POINTS = 200
QUANTILES = (0, 10, 25, 50, 75, 90, 100)  # a box: min and max dots, p10-p90 line, p25-p75 box, median
FONT_PT = 9  # every text but the legend's
LEGEND_PT = 7
_RC = {
    "svg.fonttype": "none",
    "svg.hashsalt": "edgefarm",
    "font.size": FONT_PT,
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],  # the SVG's CSS: this, else the browser's sans-serif (narrower)
}
# inches: a text line; a tick mark; a tick mark with the pad to its label; the gap between a tick
# label and the axis label; the figure's edge; room above a panel for its top tick label
_LINE = 1.25 * FONT_PT / 72
_MARK = 3.5 / 72
_TICK = 7 / 72
_PAD = 0.03
_EDGE = 0.08
_TOP = 0.12
_ROW = 0.24  # one device's row in the horizontal charts
_LEGEND_ROW = 1.5 * LEGEND_PT / 72
_SWATCH = 2.0 * LEGEND_PT / 72  # a legend entry's colour, then a pad to its label
_SWATCH_PAD = 0.8 * LEGEND_PT / 72
_LEGEND_GAP = 0.2  # between the plot (its last tick label) and the legend
# DejaVu Sans advance widths rounded up into a few classes (em); 5% more for a substitute font
_NARROW = frozenset("ijlIJ'\",. /:;\\|f-t()[]!r")
_WIDE = frozenset("mwMW@%#<>^~+=")


def text_width_in(text: str, size_pt: float = FONT_PT) -> float:
    """The width of the widest line of `text` in inches, estimated high from its characters."""
    best = 0.0
    for line in text.split("\n"):
        em = 0.0
        for ch in line:
            if ch in _NARROW:
                em += 0.42
            elif ch in _WIDE or not ch.isascii():
                em += 1.0
            elif ch.isupper():
                em += 0.8
            else:
                em += 0.65
        best = max(best, em)
    return 1.05 * best * size_pt / 72


def nice_ticks(lo: float, hi: float, bins: int = 4, integer: bool = False) -> tuple[list[float], list[str]]:
    """A few round ticks covering [lo, hi] (an axis spans its first to its last) and their labels."""
    from matplotlib.ticker import MaxNLocator

    if not (math.isfinite(lo) and math.isfinite(hi)):
        lo, hi = 0.0, 1.0
    if hi - lo <= 1e-9 * max(1.0, abs(hi)):
        pad = abs(hi) * 0.1 or 1.0
        lo, hi = lo - pad, hi + pad
    raw = MaxNLocator(nbins=bins, steps=[1, 2, 2.5, 5, 10], integer=integer).tick_values(lo, hi)
    step = float(raw[1] - raw[0])
    locs = [0.0 if abs(t) < 1e-9 * step else float(t) for t in raw]
    digits = next(d for d in range(7) if abs(step - round(step, d)) <= 1e-6 * step or d == 6)
    return locs, [f"{t:,.{digits}f}".replace("-", "−") for t in locs]


def fitting_ticks(lo: float, hi: float, width_in: float, integer: bool = False):
    """nice_ticks with as many ticks (up to 4 bins) as fit side by side on width_in inches."""
    for bins in (4, 3, 2, 1):
        locs, labels = nice_ticks(lo, hi, bins, integer)
        if width_in / (len(locs) - 1) >= _widest(labels) + 0.1:
            break
    return locs, labels


def _widest(labels: Sequence[str], size_pt: float = FONT_PT) -> float:
    return max((text_width_in(t, size_pt) for t in labels), default=0.0)


def _left(labels: Sequence[str], ylabel: bool) -> float:
    """The margin left of a panel: its tick labels, and its y label when it has one."""
    return _EDGE + (_LINE + _PAD if ylabel else 0.0) + _TICK + _widest(labels)


def _bottom(labels: Sequence[str]) -> float:
    """The margin below a panel: its tick labels (the most lines) and the x label."""
    lines = max((t.count("\n") + 1 for t in labels), default=1)
    return _TICK + lines * _LINE + _PAD + _LINE + _EDGE


def _overhang(label: str) -> float:
    """How far an x tick label centred on a panel's end reaches past it."""
    return text_width_in(label) / 2


def _legend_width(labels: Sequence[str]) -> float:
    return _LEGEND_GAP + _SWATCH + _SWATCH_PAD + _widest(labels, LEGEND_PT) + _EDGE


def _legend_height(n: int) -> float:
    return _TOP + n * _LEGEND_ROW + _EDGE


def _figure(width_in: float, height_in: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(width_in, height_in))


class _Panel:
    """A plot area of a figure, `left`..`bottom` in inches, showing data xlim by ylim (ylim from high
    to low: rows top down). Its artists are the figure's: data in data units via `add`, spines, tick
    marks and labels in inches."""

    def __init__(self, fig, left: float, bottom: float, width: float, height: float, xlim, ylim):
        from matplotlib.transforms import Bbox, BboxTransform

        self.fig, self.left, self.bottom, self.width, self.height = fig, left, bottom, width, height
        self.xlim, self.ylim = xlim, ylim
        box = Bbox.from_bounds(left, bottom, width, height)
        self.data = BboxTransform(Bbox([[xlim[0], ylim[0]], [xlim[1], ylim[1]]]), box) + fig.dpi_scale_trans
        top, right = bottom + height, left + width
        self._lines = [[(left, top), (left, bottom), (right, bottom)]]  # the left and bottom spines

    def add(self, artist):
        artist.set_transform(self.data)
        self.fig.add_artist(artist)
        return artist

    def _text(self, x: float, y: float, text: str, **kw) -> None:
        self.fig.text(x, y, text, transform=self.fig.dpi_scale_trans, **kw)

    def xticks(self, locs: Sequence[float], labels: Sequence[str], label: str = "") -> None:
        (x0, x1), b = self.xlim, self.bottom
        for x, text in zip(locs, labels):
            xi = self.left + (x - x0) / (x1 - x0) * self.width
            self._lines.append([(xi, b), (xi, b - _MARK)])
            self._text(xi, b - _TICK, text, ha="center", va="top")
        if label:  # its bottom on the figure's bottom edge
            self._text(self.left + self.width / 2, _EDGE, label, ha="center", va="bottom")

    def yticks(self, locs: Sequence[float], labels: Sequence[str], label: str = "") -> None:
        (y0, y1), le = self.ylim, self.left
        for y, text in zip(locs, labels):
            yi = self.bottom + (y - y0) / (y1 - y0) * self.height
            self._lines.append([(le, yi), (le - _MARK, yi)])
            self._text(le - _TICK, yi, text, ha="right", va="center_baseline")
        if label:  # rotated, left of the tick labels: its top side faces left
            x = le - _TICK - _widest(labels) - _PAD - _LINE
            y = self.bottom + self.height / 2
            self._text(x, y, label, ha="center", va="top", rotation=90, rotation_mode="anchor")

    def finish(self) -> None:
        """The spines and tick marks, as one artist."""
        from matplotlib.collections import LineCollection

        self.fig.add_artist(
            LineCollection(self._lines, colors="black", linewidths=0.8, transform=self.fig.dpi_scale_trans)
        )


def _legend(fig, x: float, entries: Sequence[tuple[str, tuple]], lines: bool = False) -> None:
    """A legend from `x` inches to the figure's right edge, top down: a swatch (or a line) and a label
    per entry. Two artists and a Text per entry (matplotlib's Legend packs and measures each one)."""
    from matplotlib.collections import LineCollection, PolyCollection

    top = fig.get_size_inches()[1] - _TOP
    ys = [top - (i + 0.5) * _LEGEND_ROW for i in range(len(entries))]
    x1, h = x + _SWATCH, 0.35 * LEGEND_PT / 72
    colors = [c for _, c in entries]
    if lines:
        handles = LineCollection([[(x, y), (x1, y)] for y in ys], colors=colors, linewidths=1)
    else:
        handles = PolyCollection(
            [((x, y - h), (x, y + h), (x1, y + h), (x1, y - h)) for y in ys], facecolors=colors
        )
    handles.set(transform=fig.dpi_scale_trans, gid="legend")
    fig.add_artist(handles)
    for y, (label, _) in zip(ys, entries):
        fig.text(
            x1 + _SWATCH_PAD,
            y,
            label,
            transform=fig.dpi_scale_trans,
            fontsize=LEGEND_PT,
            va="center_baseline",
        )


def _rects(boxes: Sequence[tuple[float, float, float, float]], **style):
    """(x0, x1, y0, y1) rectangles as one collection: one artist to draw, not one per bar."""
    from matplotlib.collections import PolyCollection

    return PolyCollection([((x0, y0), (x0, y1), (x1, y1), (x1, y0)) for x0, x1, y0, y1 in boxes], **style)


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


@lru_cache(maxsize=8)
def _colors(n: int) -> tuple:
    from matplotlib import colormaps

    cmap = colormaps["tab20" if n > 10 else "tab10"]
    return tuple(cmap(i % cmap.N) for i in range(n))


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
    names, colors = [r.device for r in devices], _colors(len(devices))
    xlabels = [m.replace("_", "\n") for m in mods]
    ylocs, ylabels = [0.0, 20.0, 40.0, 60.0, 80.0, 100.0], ["0", "20", "40", "60", "80", "100"]
    left, bottom, legend = _left(ylabels, True), _bottom(xlabels), _legend_width(names)
    slot = max(0.9, _widest(xlabels) + 0.15)  # a modality's room: at least its label's
    width = max(
        min(11.0, left + (slot + 0.1 * len(devices)) * len(mods) + legend), left + slot * len(mods) + legend
    )
    height = max(3.2, _legend_height(len(names)))
    fig = _figure(width, height)
    p = _Panel(
        fig, left, bottom, width - left - legend, height - _TOP - bottom, (-0.5, len(mods) - 0.5), (0, 100)
    )
    bar, boxes, fills = 0.8 / len(devices), [], []
    for i, (r, color) in enumerate(zip(devices, colors)):
        for j, mod in enumerate(mods):
            m = r.by_modality.get(mod)
            pct = 100.0 * m["passed"] / m["total"] if m and m.get("total") else 0.0
            x = j + (i - len(devices) / 2) * bar
            boxes.append((x, x + bar, 0.0, pct))
            fills.append(color)
    p.add(_rects(boxes, facecolors=fills, linewidths=0))
    p.yticks(ylocs, ylabels, "pass rate (%)")
    p.xticks(range(len(mods)), xlabels)
    p.finish()
    _legend(fig, width - legend + _LEGEND_GAP, list(zip(names, colors)))
    return _svg(fig, "pass")


def _boxes(report: RunReport, fields: tuple[tuple[str, str, str], ...], key: str) -> str | None:
    """Per device and field: a box from p25 to p75, a line from p10 to p90, a red tick at the median,
    the min and max as dots. Four artists per panel (not a boxplot artist set per device), which
    keeps a 16-device chart fast to draw and small."""
    from matplotlib.collections import LineCollection
    from matplotlib.lines import Line2D

    names = [r.device for r in report.devices]
    quantiles = {}  # field -> [(row, [min, p10, p25, p50, p75, p90, max])] of the devices with figures
    for field, _, _ in fields:
        xs = (sorted(series(report, n, field, ok_only=True)) for n in names)
        quantiles[field] = [(y, [percentile(v, q) for q in QUANTILES]) for y, v in enumerate(xs) if v]
    if not any(quantiles.values()):
        return None
    spans = [
        (min((q[0] for _, q in quantiles[f]), default=0), max((q[6] for _, q in quantiles[f]), default=1))
        for f, _, _ in fields
    ]
    left, bottom, plot_h = _left(names, False), _bottom(["0"]), max(0.9, _ROW * len(names))
    ticks, plot_w = [], 2.2
    for _ in range(3):  # the ticks that fit the panels, then the panels around those ticks, till they agree
        fitted = [fitting_ticks(lo, hi, plot_w) for lo, hi in spans]
        if fitted == ticks:
            break
        ticks = fitted
        # between two panels: half the first one's last tick label and half the next one's first
        gaps = [_overhang(a[1][-1]) + _overhang(b[1][0]) + 2 * _EDGE for a, b in pairwise(ticks)]
        right = _overhang(ticks[-1][1][-1]) + _EDGE
        width = max(11.0 if len(fields) > 2 else 8.0, left + sum(gaps) + right + 2.2 * len(fields))
        plot_w = (width - left - sum(gaps) - right) / len(fields)
    fig = _figure(width, _TOP + plot_h + bottom)
    x = left
    for i, ((field, label, unit), (locs, labels), gap) in enumerate(zip(fields, ticks, [*gaps, 0.0])):
        p = _Panel(fig, x, bottom, plot_w, plot_h, (locs[0], locs[-1]), (len(names) - 0.5, -0.5))
        rows = quantiles[field]
        p.add(
            LineCollection([[(q[1], y), (q[5], y)] for y, q in rows], colors="#555", linewidths=1, zorder=1)
        )
        boxes = [(q[2], q[4], y - 0.275, y + 0.275) for y, q in rows]
        p.add(_rects(boxes, facecolors="#9ecae1", edgecolors="#3182bd", linewidths=0.8, zorder=2))
        medians = [[(q[3], y - 0.3), (q[3], y + 0.3)] for y, q in rows]
        p.add(LineCollection(medians, colors="#d62728", linewidths=1.5, zorder=3))
        dots = ([q[0] for _, q in rows] + [q[6] for _, q in rows], [y for y, _ in rows] * 2)
        p.add(Line2D(*dots, marker="o", color="#555", markersize=2, linestyle="none", zorder=4))
        p.xticks(locs, labels, f"{label} ({unit})")
        if i == 0:  # the device names, for every panel
            p.yticks(range(len(names)), names)
        p.finish()
        x += plot_w + gap
    return _svg(fig, key)


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
    locs, labels = fitting_ticks(0.0, peak, 3.0)  # the panel is 3 in or wider
    left, bottom = _left(names, False), _bottom(labels)
    right = _overhang(labels[-1]) + _legend_width([label for label, _, _ in parts])
    width, plot_h = max(7.0, left + 3.0 + right), max(0.9, _ROW * len(rows))
    fig = _figure(width, max(_TOP + plot_h + bottom, _legend_height(len(parts))))
    p = _Panel(fig, left, bottom, width - left - right, plot_h, (locs[0], locs[-1]), (len(rows) - 0.5, -0.5))
    boxes = [
        (x0, x1, y - 0.4, y + 0.4, c) for _, c, spans in parts for y, (x0, x1) in enumerate(spans) if x1 > x0
    ]
    p.add(_rects([b[:4] for b in boxes], facecolors=[b[4] for b in boxes], linewidths=0))
    p.xticks(locs, labels, "peak memory (MB)")
    p.yticks(range(len(rows)), names)
    p.finish()
    _legend(fig, width - right + _overhang(labels[-1]) + _LEGEND_GAP, [(t, c) for t, c, _ in parts])
    return _svg(fig, "mem")


def over_the_run(report: RunReport) -> str | None:
    from matplotlib.lines import Line2D

    names = [r.device for r in report.devices]
    mem = {
        n: _thin(_in_run_order(report, n, "peak_rss_mb")) for n in names if series(report, n, "peak_rss_mb")
    }
    if not mem:
        return None
    temp = {n: _thin(_in_run_order(report, n, "thermal_c")) for n in names if series(report, n, "thermal_c")}
    panels = [(mem, "peak RSS (MB)")] + ([(temp, "temperature (°C)")] if temp else [])
    xlocs, xlabels = fitting_ticks(
        1.0, float(max(len(report.samples), 2)), 3.0, integer=True
    )  # 3 in or wider
    yticks = []
    for d, _ in panels:
        values = [v for _, ys in d.values() for v in ys if not math.isnan(v)]
        yticks.append(nice_ticks(min(values), max(values)))
    shown = [n for n in names if n in mem]  # the legend: the memory panel's lines
    legend = _legend_width(shown)
    lefts = [_left(labels, True) for _, labels in yticks]
    gap = _overhang(xlabels[-1]) + _EDGE
    width = max(11.0, sum(lefts) + gap * len(panels) + legend + 3.0 * len(panels))
    height = max(2.8, _legend_height(len(shown)))
    bottom = _bottom(xlabels)
    plot_w = (width - sum(lefts) - gap * len(panels) - legend) / len(panels)
    fig = _figure(width, height)
    colors = dict(zip(names, _colors(len(names))))
    x = 0.0
    for (d, ylabel), (ylocs, ylabels), left in zip(panels, yticks, lefts):
        x += left
        p = _Panel(
            fig, x, bottom, plot_w, height - _TOP - bottom, (xlocs[0], xlocs[-1]), (ylocs[0], ylocs[-1])
        )
        for n, (xs, ys) in d.items():
            p.add(Line2D(xs, ys, color=colors[n], linewidth=1))
        p.xticks(xlocs, xlabels, "sample (run order)")
        p.yticks(ylocs, ylabels, ylabel)
        p.finish()
        x += plot_w + gap
    _legend(fig, width - legend + _LEGEND_GAP, [(n, colors[n]) for n in shown], lines=True)
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
