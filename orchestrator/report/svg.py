"""The charts' drawing layer: SVG text written here (layout in inches, ticks, text widths, a canvas,
panels, legends); report/charts.py draws the report's charts with it. Inlined into report.html.

Why SVG is written directly: the charts are a fixed layout computed here in inches, so drawing them
needs only SVG primitives (rectangles, lines, dots, text). matplotlib drew them before, as a drawing
and SVG-writing layer only, and importing it cost 0.26 s of CPU on every `edgefarm run` (0.42 s with
numpy, which nltk imports anyway), on a 2-core host where the model's runtime competes for the CPU;
drawing took 32 ms for one device and 85 ms for 16 (200 samples), now 2 ms and 15 ms.

The layout (`_Panel`, `_legend`) is computed before drawing: the margins come from what is known in
advance (the ticks, chosen here, a few per axis; the longest label, its width estimated high from its
characters at the known font size so a browser's substitute font fits too; the legend, in a right
margin of its own). `_Canvas` writes it at 72 user units per inch (width and height in pt, and a
viewBox, as matplotlib's SVG backend does), y down; text stays text (DejaVu Sans, else the browser's
sans-serif), ids are prefixed per chart so several SVGs can share one page, and line charts keep at
most charts.MAX_POINTS points per device. The colours are matplotlib's, hard-coded.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from html import escape

FONT_PT = 9  # every text but the legend's
LEGEND_PT = 7
FONT_FAMILY = "'DejaVu Sans', sans-serif"  # DejaVu Sans' widths are what text_width_in covers
# em: DejaVu Sans' ascent (the top of "l") and descent (the bottom of "p"); a text line
_ASCENT, _DESCENT, _LINE_EM = 0.76, 0.24, 1.25
# inches: a text line; a tick mark; a tick mark with the pad to its label; the gap between a tick
# label and the axis label; the figure's edge; room above a panel for its top tick label
_LINE = _LINE_EM * FONT_PT / 72
_MARK = 3.5 / 72
_TICK = 7 / 72
_PAD = 0.03
EDGE = 0.08
TOP = 0.12
ROW = 0.24  # one device's row in the horizontal charts
_LEGEND_ROW = 1.5 * LEGEND_PT / 72
_SWATCH = 2.0 * LEGEND_PT / 72  # a legend entry's colour, then a pad to its label
_SWATCH_PAD = 0.8 * LEGEND_PT / 72
LEGEND_GAP = 0.2  # between the plot (its last tick label) and the legend
# DejaVu Sans advance widths rounded up into a few classes (em); 5% more for a substitute font
_NARROW = frozenset("ijlIJ'\",. /:;\\|f-t()[]!r")
_WIDE = frozenset("mwMW@%#<>^~+=")
# matplotlib's `tab10` and `tab20` colour maps (the Tableau palettes): one colour per device
TAB10 = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
         "#17becf")  # fmt: skip
TAB20 = ("#1f77b4", "#aec7e8", "#ff7f0e", "#ffbb78", "#2ca02c", "#98df8a", "#d62728", "#ff9896", "#9467bd",
         "#c5b0d5", "#8c564b", "#c49c94", "#e377c2", "#f7b6d2", "#7f7f7f", "#c7c7c7", "#bcbd22", "#dbdb8d",
         "#17becf", "#9edae5")  # fmt: skip
# the tick steps tried, times a power of ten: MaxNLocator's staircase for steps [1, 2, 2.5, 5, 10]
_STAIRCASE = (0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 2.5, 5.0, 10.0, 20.0)


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
    if not (math.isfinite(lo) and math.isfinite(hi)):
        lo, hi = 0.0, 1.0
    lo, hi = min(lo, hi), max(lo, hi)
    if hi - lo <= 1e-9 * max(1.0, abs(hi)):
        pad = abs(hi) * 0.1 or 1.0
        lo, hi = lo - pad, hi + pad
    raw = round_ticks(lo, hi, bins, integer)
    step = raw[1] - raw[0]
    locs = [0.0 if abs(t) < 1e-9 * step else float(t) for t in raw]
    digits = next(d for d in range(7) if abs(step - round(step, d)) <= 1e-6 * step or d == 6)
    return locs, [f"{t:,.{digits}f}".replace("-", "−") for t in locs]


def round_ticks(lo: float, hi: float, bins: int, integer: bool = False) -> list[float]:
    """matplotlib's `MaxNLocator(bins, steps=[1, 2, 2.5, 5, 10], integer=integer).tick_values(lo, hi)`
    for lo < hi, float for float: the smallest step of the staircase not below (hi - lo) / bins (or
    smaller ones, till at least two ticks fall within [lo, hi]), ticks from the last one at or below
    lo to the first at or above hi. Far from zero the range is first shifted by a power of ten."""
    span, mean = hi - lo, (hi + lo) / 2
    offset = 0.0 if abs(mean) / span < 100 else math.copysign(10 ** (math.log10(abs(mean)) // 1), mean)
    scale = 10 ** (math.log10(span / bins) // 1)
    lo, hi = lo - offset, hi - offset
    steps = [s * scale for s in _STAIRCASE]
    if integer:
        steps = [s for s in steps if s < 1 or abs(s - round(s)) < 0.001]
    largest = next((i for i, s in enumerate(steps) if s >= span / bins), len(steps) - 1)
    ticks: list[float] = []
    for step in reversed(steps[: largest + 1]):
        if integer and math.floor(hi) - math.ceil(lo) >= 1:
            step = max(1, step)
        base = (lo // step) * step
        first, last = _multiples(lo - base, hi - base, step, offset)
        ticks = [k * step + base for k in range(first, last + 1)]
        if sum(lo <= t <= hi for t in ticks) >= 2:
            break
    return [t + offset for t in ticks]


def _multiples(lo: float, hi: float, step: float, offset: float) -> tuple[int, int]:
    """The largest n with n * step <= lo and the smallest with n * step >= hi, a remainder within
    rounding error of a whole step counting as one (matplotlib's `_Edge_integer`): the slack grows
    with the offset the values were shifted by."""
    tol = min(0.4999, max(1e-10, 10 ** (math.log10(abs(offset) / step) - 12))) if offset else 1e-10
    n, rest = divmod(lo, step)
    first = n + 1 if abs(rest / step - 1) < tol else n
    n, rest = divmod(hi, step)
    last = n if abs(rest / step) < tol else n + 1
    return int(first), int(last)


def fitting_ticks(lo: float, hi: float, width_in: float, integer: bool = False):
    """nice_ticks with as many ticks (up to 4 bins) as fit side by side on width_in inches."""
    for bins in (4, 3, 2, 1):
        locs, labels = nice_ticks(lo, hi, bins, integer)
        if width_in / (len(locs) - 1) >= widest(labels) + 0.1:
            break
    return locs, labels


def widest(labels: Sequence[str], size_pt: float = FONT_PT) -> float:
    return max((text_width_in(t, size_pt) for t in labels), default=0.0)


def left_margin(labels: Sequence[str], ylabel: bool) -> float:
    """The margin left of a panel: its tick labels, and its y label when it has one."""
    return EDGE + (_LINE + _PAD if ylabel else 0.0) + _TICK + widest(labels)


def bottom_margin(labels: Sequence[str]) -> float:
    """The margin below a panel: its tick labels (the most lines) and the x label."""
    lines = max((t.count("\n") + 1 for t in labels), default=1)
    return _TICK + lines * _LINE + _PAD + _LINE + EDGE


def overhang(label: str) -> float:
    """How far an x tick label centred on a panel's end reaches past it."""
    return text_width_in(label) / 2


def legend_width(labels: Sequence[str]) -> float:
    return LEGEND_GAP + _SWATCH + _SWATCH_PAD + widest(labels, LEGEND_PT) + EDGE


def legend_height(n: int) -> float:
    return TOP + n * _LEGEND_ROW + EDGE


def _num(v: float) -> str:
    """A coordinate in the SVG: to 0.01 pt, no trailing zeros."""
    s = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if s == "-0" else s


def _unbroken(points: Iterable[tuple[float, float]]) -> Iterator[list[tuple[float, float]]]:
    """The runs of points between NaN points: a NaN is a gap in the line, as matplotlib's Line2D
    draws it (a crashed sample has no figure)."""
    run: list[tuple[float, float]] = []
    for x, y in points:
        if math.isnan(x) or math.isnan(y):
            if run:
                yield run
            run = []
        else:
            run.append((x, y))
    if run:
        yield run


class Canvas:
    """An SVG picture of width x height inches, drawn in inches from its bottom-left corner (as the
    layout computes them) and written at 72 user units per inch from its top-left corner.
    `key` prefixes every id, so that the charts of one page never share one."""

    def __init__(self, key: str, width: float, height: float):
        self.key, self.width, self.height = key, width, height
        self._parts: list[str] = []
        self._ids: dict[str, int] = {}

    def _x(self, x: float) -> str:
        return _num(72 * x)

    def _y(self, y: float) -> str:
        return _num(72 * (self.height - y))

    @contextmanager
    def group(self, name: str):
        """A <g> of class `name` around what is drawn inside; its id is `key-name`, numbered from the
        second group of that name on."""
        n = self._ids[name] = self._ids.get(name, 0) + 1
        gid = f"{self.key}-{name}" if n == 1 else f"{self.key}-{name}-{n}"
        self._parts.append(f'<g id="{gid}" class="{name}">')
        yield
        self._parts.append("</g>")

    def rect(self, x0: float, y0: float, x1: float, y1: float, fill: str, stroke: str = "", width: float = 0):
        x, y = min(x0, x1), max(y0, y1)
        edge = f' stroke="{stroke}" stroke-width="{_num(width)}"' if stroke else ""
        self._parts.append(
            f'<rect x="{self._x(x)}" y="{self._y(y)}" width="{_num(72 * abs(x1 - x0))}" '
            f'height="{_num(72 * abs(y1 - y0))}" fill="{fill}"{edge}/>'
        )

    def polylines(self, lines: Iterable[Iterable[tuple[float, float]]], stroke: str, width: float) -> None:
        """Lines as one <path>, a subpath per unbroken run of points (a lone point draws nothing)."""
        d = [
            "M" + " L".join(f"{self._x(x)} {self._y(y)}" for x, y in run)
            for line in lines
            for run in _unbroken(line)
            if len(run) > 1
        ]
        if d:
            self._parts.append(
                f'<path d="{" ".join(d)}" fill="none" stroke="{stroke}" stroke-width="{_num(width)}"/>'
            )

    def circle(self, x: float, y: float, r: float, fill: str) -> None:
        self._parts.append(f'<circle cx="{self._x(x)}" cy="{self._y(y)}" r="{_num(72 * r)}" fill="{fill}"/>')

    def text(self, x: float, y: float, text: str, size: float = FONT_PT, ha: str = "left", va: str = "baseline",
             rotation: int = 0) -> None:  # fmt: skip
        """`text` at (x, y), a <text> per line, aligned as matplotlib's ha (left, center, right) and
        va (baseline; top, bottom: of the lines' ascent and descent; center_baseline: half the ascent
        above the baseline) say, then turned `rotation` degrees counterclockwise about (x, y) (its
        rotation_mode "anchor"). The font's ascent and descent are DejaVu Sans'."""
        lines = text.split("\n")
        pitch = _LINE_EM * size
        block = _ASCENT * size + (len(lines) - 1) * pitch  # the first line's top to the last baseline
        drop = {  # pt from (x, y) down to the first baseline, before turning
            "baseline": 0.0,
            "top": _ASCENT * size,
            "bottom": _ASCENT * size - block - _DESCENT * size,
            "center_baseline": _ASCENT * size - block / 2,
        }[va]
        anchor = {"left": "start", "center": "middle", "right": "end"}[ha]
        x0, y0 = self._x(x), self._y(y)
        turn = f' transform="rotate({-rotation} {x0} {y0})"' if rotation else ""
        for i, line in enumerate(lines):
            yi = _num(72 * (self.height - y) + drop + i * pitch)
            self._parts.append(
                f'<text x="{x0}" y="{yi}" font-size="{_num(size)}" text-anchor="{anchor}"{turn}>{escape(line)}</text>'
            )

    def svg(self) -> str:
        w, h = _num(72 * self.width), _num(72 * self.height)
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}pt" height="{h}pt" viewBox="0 0 {w} {h}" '
            f'font-family="{FONT_FAMILY}" stroke-linejoin="round" stroke-linecap="butt">'
        )
        background = f'<rect width="{w}" height="{h}" fill="#ffffff"/>'
        return "\n".join([head, background, *self._parts, "</svg>"])


class Panel:
    """A plot area of a canvas, `left`..`bottom` in inches, showing data xlim by ylim (ylim from high
    to low: rows top down). Data are drawn in data units, each call one group; spines, tick marks and
    labels in inches."""

    def __init__(self, canvas: Canvas, left: float, bottom: float, width: float, height: float, xlim, ylim):
        self.canvas, self.left, self.bottom, self.width, self.height = canvas, left, bottom, width, height
        self.xlim, self.ylim = xlim, ylim
        top, right = bottom + height, left + width
        self._marks = [[(left, top), (left, bottom), (right, bottom)]]  # the left and bottom spines

    def x(self, v: float) -> float:
        (x0, x1) = self.xlim
        return self.left + (v - x0) / (x1 - x0) * self.width

    def y(self, v: float) -> float:
        (y0, y1) = self.ylim
        return self.bottom + (v - y0) / (y1 - y0) * self.height

    def rects(self, name: str, boxes: Iterable[tuple[float, float, float, float]], fills: Iterable[str],
              stroke: str = "", width: float = 0) -> None:  # fmt: skip
        """(x0, x1, y0, y1) rectangles, a fill each."""
        with self.canvas.group(name):
            for (x0, x1, y0, y1), fill in zip(boxes, fills):
                self.canvas.rect(self.x(x0), self.y(y0), self.x(x1), self.y(y1), fill, stroke, width)

    def lines(
        self, name: str, lines: Iterable[Iterable[tuple[float, float]]], color: str, width: float
    ) -> None:
        """Lines of points, broken where a point is NaN."""
        with self.canvas.group(name):
            self.canvas.polylines([[(self.x(a), self.y(b)) for a, b in line] for line in lines], color, width)

    def dots(self, name: str, points: Iterable[tuple[float, float]], color: str, size_pt: float) -> None:
        with self.canvas.group(name):
            for a, b in points:
                self.canvas.circle(self.x(a), self.y(b), size_pt / 144, color)

    def xticks(self, locs: Sequence[float], labels: Sequence[str], label: str = "") -> None:
        b = self.bottom
        for v, text in zip(locs, labels):
            x = self.x(v)
            self._marks.append([(x, b), (x, b - _MARK)])
            self.canvas.text(x, b - _TICK, text, ha="center", va="top")
        if label:  # its bottom on the figure's bottom edge
            self.canvas.text(self.left + self.width / 2, EDGE, label, ha="center", va="bottom")

    def yticks(self, locs: Sequence[float], labels: Sequence[str], label: str = "") -> None:
        le = self.left
        for v, text in zip(locs, labels):
            y = self.y(v)
            self._marks.append([(le, y), (le - _MARK, y)])
            self.canvas.text(le - _TICK, y, text, ha="right", va="center_baseline")
        if label:  # turned a quarter, left of the tick labels: its top side faces left
            x = le - _TICK - widest(labels) - _PAD - _LINE
            self.canvas.text(x, self.bottom + self.height / 2, label, ha="center", va="top", rotation=90)

    def finish(self) -> None:
        """The spines and tick marks, as one path."""
        with self.canvas.group("axes"):
            self.canvas.polylines(self._marks, "#000000", 0.8)


def panel_row(key: str, yticks: Sequence[tuple[Sequence[float], Sequence[str]]], xlocs: Sequence[float],
              xlabels: Sequence[str], legend_labels: Sequence[str], min_width: float = 0.0,
              plot_w: float | None = None) -> tuple[Canvas, list[Panel], float]:  # fmt: skip
    """Panels side by side on one canvas, sharing the x axis `xlocs`, each with its own y axis (`yticks`,
    its (locs, labels)), and room for a legend of `legend_labels` at the right: each panel `plot_w` wide,
    or what `min_width` (inches, at least 3 a panel) leaves. The canvas, its panels (to draw on, tick and
    finish, in order) and the legend's x."""
    lefts = [left_margin(labels, True) for _, labels in yticks]
    gap, legend, n = overhang(xlabels[-1]) + EDGE, legend_width(legend_labels), len(yticks)
    if plot_w is None:
        width = max(min_width, sum(lefts) + gap * n + legend + 3.0 * n)
        plot_w = (width - sum(lefts) - gap * n - legend) / n
    else:
        width = sum(lefts) + (plot_w + gap) * n + legend
    height, bottom = max(2.8, legend_height(len(legend_labels))), bottom_margin(xlabels)
    canvas, panels, x = Canvas(key, width, height), [], 0.0
    for (ylocs, _), left in zip(yticks, lefts):
        x += left
        panels.append(Panel(canvas, x, bottom, plot_w, height - TOP - bottom, (xlocs[0], xlocs[-1]),
                            (ylocs[0], ylocs[-1])))  # fmt: skip
        x += plot_w + gap
    return canvas, panels, width - legend + LEGEND_GAP


def legend(
    canvas: Canvas, x: float, entries: Sequence[tuple[str, str]], lines: bool = False, mark: str = ""
) -> None:
    """A legend from `x` inches to the figure's right edge, top down: a mark and a label per entry,
    in a group of class "legend". The mark matches what the chart draws: a swatch (bars), a line
    (`lines`) or a dot (`mark="dot"`, a scatter)."""
    top = canvas.height - TOP
    x1, h = x + _SWATCH, 0.35 * LEGEND_PT / 72
    with canvas.group("legend"):
        for i, (label, color) in enumerate(entries):
            y = top - (i + 0.5) * _LEGEND_ROW
            if mark == "dot":
                canvas.circle((x + x1) / 2, y, 4.5 / 72, color)
            elif lines:
                canvas.polylines([[(x, y), (x1, y)]], color, 1)
            else:
                canvas.rect(x, y - h, x1, y + h, color)
            canvas.text(x1 + _SWATCH_PAD, y, label, size=LEGEND_PT, va="center_baseline")


def colors(n: int) -> tuple[str, ...]:
    """A colour per device: tab10's, or tab20's past ten devices (repeating past twenty)."""
    palette = TAB20 if n > 10 else TAB10
    return tuple(palette[i % len(palette)] for i in range(n))
