"""A bench's report.html: tokens/s against depth per device and backend, and a table per shape with
the best marked only when its 95% interval is clear of every other's.

Pure: bench.json's cells in, one HTML page out (report/svg.py draws the charts, as the run's report).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from ..catalogue import ON_TG, SPEED
from ..report import svg
from ..report.facts import conditions_problems, conditions_text
from ..telemetry.conditions import RunConditions
from .results import bench_measures, read_cells
from .sustained import headers, summary, table

Cell = Mapping[str, Any]  # one entry of bench.json `cells` (results.CellResult.to_json)
# the catalogue's bench measures: the speeds (charts, ★) and the tg row's others (the tables' columns)
SPEEDS = tuple((m.name, f"{m.label.lower()} tokens/s") for m in bench_measures() if m.bench == SPEED)
ON_TG_MEASURES = tuple(m for m in bench_measures() if m.bench == ON_TG)


def series_key(c: Cell) -> str:
    """A curve: one device with one engine setting."""
    t = f" t{c['threads']}" if c.get("threads") else ""
    return f"{c['device']} {c['backend']}{t}"


def best(cells: Sequence[Cell], figure: str) -> Cell | None:
    """The cell whose mean is highest AND whose interval's low end is above every other interval's high
    end; None when the intervals overlap (no clear best) or any lacks an interval."""
    have = [c for c in cells if c[figure]["mean"] is not None]
    if len(have) < 2 or any(c[figure]["ci95"] is None for c in have):
        return None
    top = max(have, key=lambda c: c[figure]["mean"])
    clear = all(top[figure]["ci95"][0] > c[figure]["ci95"][1] for c in have if c is not top)
    return top if clear else None


def measured(c: Cell) -> bool:
    """Anything ran for the cell (an ok or a failed repetition): an interrupted bench leaves cells that
    did not, until `edgefarm bench --resume` runs them."""
    return bool(c["repetitions"] or c["errors"])


def cut_short(c: Cell) -> bool:
    """Some, not all, of the cell's asked repetitions ran (bench.json of an older edgefarm: never)."""
    return measured(c) and c["repetitions"] + len(c["errors"]) < (c.get("repetitions_asked") or 0)


def reps_text(c: Cell) -> str:
    """`5`, `5, 1 failed`; `37 of 100` when an interruption cut the cell short, `0 of 100` before it ran."""
    asked = c.get("repetitions_asked") or 0
    short = asked and c["repetitions"] + len(c["errors"]) < asked
    text = f"{c['repetitions']} of {asked}" if short else str(c["repetitions"])
    return text + (f", {len(c['errors'])} failed" if c["errors"] else "")


def partial_note(cells: Sequence[Cell]) -> str:
    """One sentence when the grid is not complete ('' when it is): how many cells ran in full, cut
    short, not at all."""
    short = [c for c in cells if cut_short(c)]
    missing = [c for c in cells if not measured(c)]
    if not short and not missing:
        return ""
    full = len(cells) - len(short) - len(missing)
    return (
        f"partial grid: {full} of {len(cells)} cells measured in full, {len(short)} cut short, "
        f"{len(missing)} not measured"
    )


def depth_chart(cells: Sequence[Cell], n_prompt: int, n_gen: int, key: str) -> str | None:
    """Prefill and decode tokens/s against depth, a line per device and setting, whiskers the 95%
    intervals; the x axis spans the grid's depths, measured or not. None with fewer than two depths
    or when no cell of the pair has a speed (an interrupted bench: the page says so)."""
    mine = [c for c in cells if c["n_prompt"] == n_prompt and c["n_gen"] == n_gen]
    depths = sorted({c["n_depth"] for c in mine})
    panels = [(f, label) for f, label in SPEEDS if any(c[f]["mean"] is not None for c in mine)]
    if len(depths) < 2 or not panels:
        return None
    names = list(dict.fromkeys(series_key(c) for c in mine if measured(c)))
    colors = dict(zip(names, svg.colors(len(names))))
    xlocs, xlabels = svg.fitting_ticks(float(depths[0]), float(depths[-1]), 3.0, integer=True)
    yt = []
    for f, _ in panels:
        tops = [c[f]["ci95"][1] if c[f]["ci95"] else c[f]["mean"] for c in mine if c[f]["mean"] is not None]
        yt.append(svg.nice_ticks(0.0, max(tops)))
    canvas, plots, legend_x = svg.panel_row(key, yt, xlocs, xlabels, names, 9.0)
    for (f, label), (ylocs, ylabels), p in zip(panels, yt, plots):
        for name in names:
            pts = sorted(
                (c["n_depth"], c[f]) for c in mine if series_key(c) == name and c[f]["mean"] is not None
            )
            p.lines("series", [[(d, fig["mean"]) for d, fig in pts]], colors[name], 1.5)
            p.dots("points", [(d, fig["mean"]) for d, fig in pts], colors[name], 4)
            p.lines("intervals", [[(d, fig["ci95"][0]), (d, fig["ci95"][1])] for d, fig in pts if fig["ci95"]],
                    colors[name], 0.8)  # fmt: skip
        p.xticks(xlocs, xlabels, "depth (tokens in the cache before the prompt)")
        p.yticks(ylocs, ylabels, label)
        p.finish()
    svg.legend(canvas, legend_x, [(n, colors[n]) for n in names], lines=True)
    return canvas.svg()


def _fig(f: Mapping[str, Any] | None, fmt: str = "{:.1f}") -> str:
    """`mean ± sd [lo–hi]`; `-` for a figure the cell has not (or a bench.json without it)."""
    if f is None or f["mean"] is None:
        return "-"
    sd = f" ± {fmt.format(f['sd'])}" if f["sd"] is not None else ""
    ci = f" [{fmt.format(f['ci95'][0])}–{fmt.format(f['ci95'][1])}]" if f["ci95"] else ""
    return fmt.format(f["mean"]) + sd + ci


def shape_table(cells: Sequence[Cell]) -> str:
    """One row per device and setting of one shape; ★ on a speed that is clearly the best."""
    marks = {f: best(cells, f) for f, _ in SPEEDS}
    head = [
        "device",
        "backend",
        "threads",
        *(f"{m.label.lower()} t/s" for m in bench_measures() if m.bench == SPEED),
        *(f"{m.label} {m.unit}" for m in ON_TG_MEASURES),
        "init ms",
        "peak MB",
        "reps",
    ]
    bounded = any(c.get("decode_bound_ts") for c in cells)
    if bounded:
        head.append("decode % of bandwidth bound")
    rows = []
    for c in cells:
        speed = [("★ " if marks[f] is c else "") + _fig(c[f]) for f, _ in SPEEDS]
        load = "" if c.get("engine_load") is None else f" (load {c['engine_load']})"
        init = "-" if c.get("init_ms") is None else f"{c['init_ms']:.1f}{load}"
        peak = "-" if c.get("peak_rss_mb") is None else f"{c['peak_rss_mb']:.1f}"
        if not measured(c):
            speed = ["not measured"] * len(SPEEDS)
        row = [c["device"], c["backend_ran"] or c["backend"], str(c.get("threads") or "default"), *speed,
               *(_fig(c.get(m.name), "{:.2f}") for m in ON_TG_MEASURES), init, peak, reps_text(c)]  # fmt: skip
        if bounded:
            b = c.get("decode_bound_ts")
            row.append(f"{100 * c['decode_tps']['mean'] / b:.1f}%" if b and c["decode_tps"]["mean"] else "-")
        rows.append(row)
    cells_html = "".join("<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in r) + "</tr>" for r in rows)
    return ("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>" + cells_html
            + "</table>")  # fmt: skip


def sustain_section(curves: Mapping[str, Any]) -> str:
    """--sustain: a line per device (first throttle, last pass against the first) and the per-pass table."""
    items = "".join(f"<li>{html.escape(summary(d, s))}</li>" for d, s in curves.items() if s)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers())
    body = "".join("<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in r) + "</tr>" for r in table(curves))
    return (f"<section id='sustain'><h2>Sustained load (--sustain): each pass against the first</h2><ul>{items}</ul>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></section>")  # fmt: skip


def conditions_section(conditions: RunConditions | None) -> str:
    """The conditions the bench ran under and what was bad during it, as the run's report says them
    (report/facts.py); '' when none were recorded."""
    text, bad = conditions_text(conditions), conditions_problems(conditions)
    if not text and not bad:
        return ""
    items = "".join(f"<li>{html.escape(p)}</li>" for p in bad)
    return ("<section id='conditions'><h2>Conditions (docs/conditions.md)</h2>"
            + (f"<p>{html.escape(text)}</p>" if text else "") + (f"<ul class='problems'>{items}</ul>" if items else "")
            + "</section>")  # fmt: skip


def render(bench: Mapping[str, Any], conditions: RunConditions | None = None) -> str:
    """The page: the conditions (run.json's), a chart per (prompt, generated) over depth, then a table per
    shape."""
    cells = read_cells(bench)
    title = f"<h1>edgefarm bench {html.escape(str(bench.get('run_id', '')))}</h1>"
    intro = (
        f"<p>model {html.escape(str(bench.get('model', {}).get('path', '')))}; figures are the mean ± sd "
        "[95% interval] over the repetitions; ★ marks a speed whose interval is clear of every other's "
        "on that shape (none when they overlap).</p>"
    )
    parts = [title, intro, conditions_section(conditions)]
    gaps = partial_note(cells)
    if gaps:
        parts.append(f"<p class='partial'><strong>{html.escape(gaps)}</strong>: `edgefarm bench --resume` "
                     "of this run's folder runs the rest</p>")  # fmt: skip
    pairs = list(dict.fromkeys((c["n_prompt"], c["n_gen"]) for c in cells))
    for i, (p, n) in enumerate(pairs):
        chart = depth_chart(cells, p, n, f"depth{i}")
        if chart:
            parts.append(f"<h2>p{p} n{n}: tokens/s against depth</h2><figure>{chart}</figure>")
        elif len({c["n_depth"] for c in cells if (c["n_prompt"], c["n_gen"]) == (p, n)}) > 1:
            parts.append(f"<h2>p{p} n{n}: tokens/s against depth</h2><p>not measured: no cell of this "
                         "shape has a speed yet</p>")  # fmt: skip
    shapes = list(dict.fromkeys((c["n_prompt"], c["n_gen"], c["n_depth"]) for c in cells))
    for p, n, d in shapes:
        mine = [c for c in cells if (c["n_prompt"], c["n_gen"], c["n_depth"]) == (p, n, d)]
        parts.append(f"<h2>p{p} n{n} d{d}</h2>" + shape_table(mine))
    if bench.get("sustain"):  # --sustain: the passes against the first (bench/sustained.py)
        parts.append(sustain_section(bench["sustain"]))
    style = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:1.5em}"
             "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#f4f4f4}"
             "td:first-child,th:first-child{text-align:left}")  # fmt: skip
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>edgefarm bench</title><style>{style}</style>"
            f"</head><body>{''.join(parts)}</body></html>\n")  # fmt: skip


__all__ = [
    "best",
    "conditions_section",
    "cut_short",
    "depth_chart",
    "measured",
    "partial_note",
    "render",
    "reps_text",
    "shape_table",
    "sustain_section",
]
