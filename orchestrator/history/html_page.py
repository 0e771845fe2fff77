"""`edgefarm history --html FILE`: a page of trend charts, one section per device and configuration:
each figure over its runs (a dot per run, its 95% interval as a bar, a significant change in red),
the stability beside it, the changes listed, and a link to each run's report.html. Self-contained
(inline SVG drawn with report/svg.py, no script), like report.html. Pure."""

from __future__ import annotations

import html
from pathlib import Path

from ..report import svg
from .render import MARKS, MD_FIGURES, NOTE, config_text, legend, mark_key
from .types import Point, Series, figure_spec, number

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
_CSS = """body{font-family:system-ui,sans-serif;margin:1.5em 2em;color:#222;max-width:1400px}
table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #ccc;padding:.25em .5em;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}.charts{display:flex;flex-wrap:wrap;gap:1em}
figure{margin:0}figcaption{font-weight:600;font-size:.9em}.change{color:#a11}.note{color:#555;font-size:.9em}
svg{max-width:100%;height:auto}"""
CHANGED = "#d62728"  # a change for the worse
BETTER = "#2ca02c"  # a change for the better
OUTLIER = "#ff9f1c"
NORMAL = "#1f77b4"
EXCLUDED = "#bbbbbb"
COLORS = {"worse": CHANGED, "better": BETTER, "outlier": OUTLIER, "excluded": EXCLUDED}
CHART_W, CHART_H = 4.2, 2.2


def _e(x: object) -> str:
    return html.escape(str(x), quote=True)


def trend_chart(key: str, points: tuple[Point, ...], figure: str, marks: dict[str, str]) -> str | None:
    """One figure over the runs: x = the run's place in the series, y = the value with its interval;
    `marks`: run id -> its MARKS key (coloured)."""
    spec = figure_spec(figure)
    found = [(i + 1, p.figures[figure], p.run_id) for i, p in enumerate(points) if figure in p.figures]
    if not found:
        return None
    ys = [v for _, f, _ in found for v in (f.value, f.lo, f.hi) if v is not None]
    lo, hi = min(ys), max(ys)
    if hi - lo < 1e-9:
        lo, hi = lo - max(abs(lo) * 0.05, 1e-3), hi + max(abs(hi) * 0.05, 1e-3)
    ylocs, ylabels = svg.nice_ticks(lo, hi)
    xlocs, xlabels = svg.fitting_ticks(1.0, float(max(len(points), 2)), CHART_W - 1.2, integer=True)
    left, bottom = svg.left_margin(ylabels, True), svg.bottom_margin(xlabels)
    right = svg.overhang(xlabels[-1]) + svg.EDGE
    canvas = svg.Canvas(key, CHART_W, CHART_H)
    p = svg.Panel(canvas, left, bottom, CHART_W - left - right, CHART_H - svg.TOP - bottom,
                  (xlocs[0] - 0.4, xlocs[-1] + 0.4), (ylocs[0], ylocs[-1]))  # fmt: skip
    p.lines("trend", [[(x, f.value) for x, f, _ in found]], "#999999", 0.8)
    for x, f, run_id in found:
        color = COLORS.get(marks.get(run_id, ""), NORMAL)
        if f.lo is not None and f.hi is not None:
            p.lines("interval", [[(x, f.lo), (x, f.hi)]], color, 1.2)
        p.dots("run", [(x, f.value)], color, 5)
    col = spec.column
    p.xticks(xlocs, xlabels, "run (oldest first)")
    p.yticks(ylocs, ylabels, col.header)
    p.finish()
    return canvas.svg()


def _runs_table(s: Series) -> str:
    head = "<tr><th>#</th><th>Run</th><th>Started</th><th>Runtime</th><th>Model</th><th>Report</th></tr>"
    rows = []
    for i, p in enumerate(s.points, 1):
        report = Path(p.folder) / "report.html"
        link = f'<a href="{_e(report.as_uri())}">report.html</a>' if p.folder.startswith("/") else "–"
        rows.append(f"<tr><td>{i}</td><td>{_e(p.run_id)}</td><td>{_e(p.started_at)}</td>"
                    f"<td>{_e(p.runtime_version or p.runtime_sha256[:12] or '?')}</td>"
                    f"<td>{_e(p.model_sha256[:12])}</td><td>{link}</td></tr>")  # fmt: skip
    return f"<table>{head}{''.join(rows)}</table>"


def _section(n: int, s: Series) -> str:
    parts = [f"<h2>{_e(s.device)} ({_e(s.hardware or 'unknown hardware')})</h2>",
             f"<p class=note>{_e(config_text(s.config))}; configuration {_e(s.config_key)}</p>"]  # fmt: skip
    stab = {x.figure: x for x in s.stability}
    charts = []
    for figure in MD_FIGURES:
        js = s.judgements.get(figure, ())
        marks = {p.run_id: mark_key(j) for p, j in zip(s.points, js, strict=False)}
        chart = trend_chart(f"h{n}-{figure}", s.points, figure, marks)
        if chart is None:
            continue
        x = stab.get(figure)
        unit = figure_spec(figure).column.unit
        note = "" if x is None else (f"CV {_num(x.cv_pct, '{:.1f}%')}, p99/p50 {_num(x.p99_p50, '{:.2f}')}, "
                                     f"sd {number(x.rolling_sd)} {unit} over {x.runs} runs")  # fmt: skip
        charts.append(f"<figure><figcaption>{_e(figure_spec(figure).column.label)}</figcaption>{chart}"
                      f"<div class=note>{_e(note)}</div></figure>")  # fmt: skip
    parts.append(f"<div class=charts>{''.join(charts)}</div>")
    if s.changes:
        items = "".join(f"<li class=change>{_e(c.text())}</li>" for c in s.changes)
        parts.append(
            f"<p>Changes against the spread between the comparable runs before each:</p><ul>{items}</ul>"
        )
    else:
        parts.append("<p class=note>No change called.</p>")
    parts.append(_runs_table(s))
    return "\n".join(parts)


def _num(v: float | None, fmt: str) -> str:
    return "–" if v is None else fmt.format(v)


def render_page(series: list[Series]) -> str:
    body = "\n".join(_section(i, s) for i, s in enumerate(series)) or "<p>No runs in the history match.</p>"
    return (f"<!doctype html><html><head><meta charset=utf-8>"
            f'<meta http-equiv="Content-Security-Policy" content="{_CSP}"><title>edgefarm history</title>'
            f"<style>{_CSS}</style></head><body><h1>edgefarm history</h1>"
            f"<p class=note>{_e(NOTE)} {_e('; '.join(legend(set(MARKS))))}. Dots: blue as usual, red a change "
            "for the worse, green for the better, orange an outlier, grey excluded.</p>"
            f"{body}</body></html>\n")  # fmt: skip
