"""report.html: the run stamp, the device table, charts (inline SVG), the disagreements and a
drill-down of every sample on every device with filters. One self-contained file: opens offline,
loads nothing (its Content-Security-Policy forbids it), the filters are a few lines of inline JS."""

from __future__ import annotations

import html
from urllib.parse import quote

from .. import sustain
from ..catalogue import DRILL, measures
from .best import BEST, TIED
from .cells import BEST_NOTE, Cell, device_details, device_table, mod_cell, modalities, shared_settings
from .conditions import conditions_lines
from .facts import (
    FIGURES_NOTE,
    INTERVALS_NOTE,
    agreement_matrix,
    card_only_lines,
    disagreement_answers,
    paired_lines,
    problems,
    sharing_text,
    stamp_items,
    worst_pair_text,
)
from .fidelity_views import fidelity_table, worst_table
from .figures import ENERGY_NOTE
from .matrix_views import CSS as MATRIX_CSS
from .matrix_views import matrix_html
from .types.run_report import RunReport
from .types.sample_row import SampleCell, SampleRow
from .units import UNITS_NOTE, units_table

DRILL_MEASURES = measures(DRILL)  # the drill-down's figure columns (catalogue.MEASURES)

HTML_OUTPUT_CHARS = 400
# media: the run folder's own copies (report/media.py), relative links; nothing from elsewhere
_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data: 'self' file:; "
    "media-src 'self' file:"
)
_CSS = """body{font-family:system-ui,sans-serif;margin:1.5em 2em;color:#222;max-width:1400px}
table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #ccc;padding:.25em .5em;text-align:right;vertical-align:top}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}dl{display:grid;grid-template-columns:max-content 1fr;gap:.15em 1em}
dt{font-weight:600}dd{margin:0;word-break:break-all}.pass{color:#176b2c}.fail{color:#a11}.skip{color:#777}
figure{margin:1em 0}figcaption{font-weight:600}nav a{margin-right:1em}.out{text-align:left;white-space:pre-wrap;max-width:46em;font-family:ui-monospace,monospace;font-size:.85em}
th:last-child{text-align:left}tr.sh th{text-align:left;background:#e8eef7;font-weight:normal}.err{color:#a11}#filters{position:sticky;top:0;background:#fff;padding:.4em 0;border-bottom:1px solid #ddd}
svg{max-width:100%;height:auto}td.best{background:#e6f4ea;font-weight:600}.note{color:#555;font-size:.9em}
#devices{font-size:.92em}#devices td,#devices th{padding:.2em .35em}#devices .v,#devices .ci{white-space:nowrap}
#devices td.t{text-align:left;overflow-wrap:anywhere;max-width:11em}
#devices th{font-size:.9em;vertical-align:bottom}.tied{color:#666;font-size:.8em}#device-details li{margin:.15em 0}
.prompt{text-align:left;white-space:pre-wrap;max-width:60em;font-family:ui-monospace,monospace;font-size:.85em;margin:.2em 0}
img.thumb{max-height:120px;max-width:200px;border:1px solid #ccc;margin:.2em .4em .2em 0;vertical-align:top}
#disagreeing td,#disagreeing th{text-align:left}.ci{color:#666;font-size:.8em;font-weight:normal;white-space:nowrap}#shared{margin:.3em 0}"""
_JS = """function applyFilters(){
const v=id=>document.getElementById(id).value;const m=v('f-modality'),st=v('f-status'),d=v('f-device');
const dis=document.getElementById('f-disagree').checked;let shown=0,total=0;
document.querySelectorAll('tbody.sample').forEach(tb=>{let any=false;
const keep=(!m||tb.dataset.modality===m)&&(!dis||tb.dataset.disagree==='1');
tb.querySelectorAll('tr.cell').forEach(tr=>{total++;
const ok=keep&&(!d||tr.dataset.device===d)&&(!st||tr.dataset.status===st||tr.dataset.verdict===st);
tr.hidden=!ok;if(ok){any=true;shown++;}});tb.hidden=!any;});
document.getElementById('shown').textContent=shown+' of '+total+' rows shown';}
document.querySelectorAll('#filters select,#filters input').forEach(e=>e.addEventListener('change',applyFilters));
applyFilters();"""


_VERDICT_LABELS = {
    "pass": "✓ pass",
    "fail": "✗ fail",
    "scoring-error": "✗ scoring error",
    "none": "· not scored",
}


def _e(x: object) -> str:
    return html.escape(str(x), quote=True)


def _table(headers: list[str], rows: list[list[str]], raw: bool = False, attrs: str = "") -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c if raw else _e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table{attrs}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _verdict(c: SampleCell) -> str:
    if c.scoring_error:
        return "scoring-error"
    return {True: "pass", False: "fail", None: "none"}[c.passed]


def _num(v: float | None, fmt: str = "{:.0f}") -> str:
    return "–" if v is None else fmt.format(v)


def _media(path: str, link_root: str = "") -> str:
    """A thumbnail (image) or a player (audio) of a file the run folder holds (report/media.py);
    `link_root`: the run folder's URL when the page is not written into it (render_html)."""
    href = link_root + quote(path)
    if path.rsplit(".", 1)[-1].lower() in ("wav", "mp3", "flac", "ogg", "m4a", "opus"):
        return f"<audio controls preload='none' src='{href}'></audio>"
    return f"<a href='{href}'><img class='thumb' loading='lazy' alt='{_e(path)}' src='{href}'></a>"


def _sample_block(s: SampleRow, names: list[str], disagree: bool, link_root: str = "") -> str:
    ref = (
        f" — reference: <span class='out'>{_e(s.reference[:HTML_OUTPUT_CHARS])}</span>" if s.reference else ""
    )
    prompt = f"<div class='prompt'>{_e(s.prompt[: 2 * HTML_OUTPUT_CHARS])}</div>" if s.prompt else ""
    media = "".join(_media(m, link_root) for m in s.media)
    parts = [
        f"<tbody class='sample' id='s-{_e(s.id)}' data-modality='{_e(s.modality)}' data-disagree='{int(disagree)}'>",
        f"<tr class='sh'><th colspan='{6 + len(DRILL_MEASURES)}'><b>{_e(s.id)}</b> · {_e(s.modality)} · {_e(s.task)}{ref}{prompt}{media}</th></tr>",
    ]
    for n in names:
        c = s.cells.get(n)
        if c is None:
            continue
        verdict = _verdict(c)
        figures = "".join(f"<td>{_num(getattr(c, m.name), m.fmt)}</td>" for m in DRILL_MEASURES)
        mark = _VERDICT_LABELS[verdict]
        strict = {True: "✓", False: "✗", None: "·"}[c.strict_passed]
        text = c.output[:HTML_OUTPUT_CHARS] + ("…" if len(c.output) > HTML_OUTPUT_CHARS else "")
        detail = f"<div class='err'>{_e(c.scoring_error)}</div>" if c.scoring_error else ""
        cls = "err" if c.status != "ok" else ""
        where = (" <i>(stand-in)</i>" if c.stood_in else "") + (
            f" <i>(on {_e(c.ran_on)})</i>" if c.ran_on else ""
        )
        parts.append(
            f"<tr class='cell' data-device='{_e(n)}' data-status='{_e(c.status)}' data-verdict='{verdict}'>"
            f"<td>{_e(n)}{where}</td><td>{_e(c.status)}</td><td class='{verdict.split('-')[0]}'>{mark}</td>"
            f"<td class='{'fail' if c.strict_passed is False else 'pass' if c.strict_passed else 'skip'}'>{strict}</td>"
            f"<td>{_num(c.score, '{:.3f}')}</td>{figures}<td class='out {cls}'>{_e(text)}{detail}</td></tr>"
        )
    parts.append("</tbody>")
    return "".join(parts)


def _options(fid: str, label: str, values: list[str], labels: dict[str, str] | None = None) -> str:
    labels = labels or {}
    opts = "".join(f"<option value='{_e(v)}'>{_e(labels.get(v, v))}</option>" for v in values)
    return f"<label>{label} <select id='{fid}'><option value=''>all</option>{opts}</select></label> "


def _drill_down(report: RunReport, link_root: str = "") -> str:
    names = [r.device for r in report.devices]
    disagree = {d.id for d in report.disagreements.samples}
    statuses = sorted({c.status for s in report.samples for c in s.cells.values()})
    filters = (
        "<div id='filters'>"
        + _options("f-modality", "modality", sorted({s.modality for s in report.samples if s.modality}))
        + _options(
            "f-status", "status", ["pass", "fail", "scoring-error", "none"] + statuses, _VERDICT_LABELS
        )
        + _options("f-device", "device", names)
        + "<label><input type='checkbox' id='f-disagree'> only disagreements</label> <span id='shown'></span></div>"
    )
    head = "".join(
        f"<th>{h}</th>"
        for h in (
            "Device",
            "Status",
            "Card",
            "Strict",
            "Score",
            *(f"{m.label} {m.unit}" for m in DRILL_MEASURES),
            "Output / error",
        )
    )
    body = "".join(_sample_block(s, names, s.id in disagree, link_root) for s in report.samples)
    return f"{filters}<table id='samples-table'><thead><tr>{head}</tr></thead>{body}</table>"


def _devices(report: RunReport, link_root: str = "") -> str:
    """The compact "which device?" table (the decisive figures first, fits a 1280 px screen), the
    shared settings once above it and a details line per device (the other figures, how memory was
    measured, the device's files) under it."""
    headers, rows = device_table(report)
    figure = [i > 0 and h.endswith(")") for i, h in enumerate(headers)]  # a unit: a figure, else text
    body = []
    for row in rows:
        cells = "".join(
            _figure(c) if fig else f"<td class='t'>{_e(c.value)}</td>"
            for c, fig in zip(row, figure, strict=True)
        )
        body.append(f"<tr>{cells}</tr>")
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    shared = " · ".join(text for _, text in shared_settings(report))
    same = f"<p id='shared'>Same on every device: {_e(shared)}</p>" if shared else ""
    details = []
    for r, (name, parts) in zip(report.devices, device_details(report), strict=True):
        folder = link_root + quote(f"devices/{r.folder}" if r.folder else "devices")
        links = f"files: <a href='{folder}/results.jsonl'>results</a> · <a href='{folder}/raw/'>raw</a>"
        details.append(f"<li><b>{_e(name)}</b>: {_e('; '.join(parts))}{'; ' if parts else ''}{links}</li>")
    return (
        f"{same}<table id='devices'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
        f"<ul id='device-details' class='note'>{''.join(details)}</ul>"
    )


def _figure(c: Cell) -> str:
    """A figure's cell with its interval under it, smaller: `12.3` over `(11.8–13.1)`; ★ or tied."""
    mark = " ★" if c.mark == BEST else "<span class='tied'> tied</span>" if c.mark == TIED else ""
    ci = f"<br><span class='ci'>{_e(c.interval)}</span>" if c.interval else ""
    cls = " class='best'" if c.mark == BEST else ""
    return f"<td{cls}><span class='v'>{_e(c.value)}{mark}</span>{ci}</td>"


def _paired(report: RunReport) -> str:
    """Each device against the baseline on the same samples (the figures behind the speed-up)."""
    if not report.paired:
        return ""
    items = "".join(f"<li>{_e(line)}</li>" for line in paired_lines(report))
    return (
        f"<section id='paired'><h3>Against the baseline ({_e(report.baseline)}), on the same samples</h3>"
        f"<ul>{items}</ul></section>"
    )


def _fidelity(report: RunReport) -> str:
    """--fidelity: each device against the reference device, and the largest departures side by side."""
    out = []
    for table, key in ((fidelity_table(report), "fidelity"), (worst_table(report), "fidelity-worst")):
        if table is not None:
            rows = [list(r) for r in table.rows]
            out.append(f"<h3 id='{key}'>{_e(table.title)}</h3>" + _table(list(table.headers), rows))
            if table.note:
                out.append(f"<p class='note'>{_e(table.note)}</p>")
    return "".join(out)


def _units(report: RunReport) -> str:
    """--units: each group's table (between- and within-unit spread, each unit's level) and outliers."""
    out = []
    for g in report.units:
        headers, rows = units_table(g)
        out.append(f"<h3 id='units-{_e(g.name)}'>Units of {_e(g.name)} (--units)</h3>" + _table(headers, rows))
        out.append(f"<p class='note'>{_e(UNITS_NOTE)}</p>")
        if g.outliers:
            out.append("<ul class='outliers'>" + "".join(f"<li>{_e(o)}</li>" for o in g.outliers) + "</ul>")
        else:
            out.append("<p class='note'>No unit stands out.</p>")
    return "".join(out)


def _card_only(report: RunReport) -> str:
    lines = card_only_lines(report)
    if not lines:
        return ""
    links = []
    for r in report.devices:
        if r.card_only:
            ids = ", ".join(f"<a href='#s-{_e(i)}'>{_e(i)}</a>" for i in r.card_only)
            links.append(f"<li>{_e(r.device)}: {len(r.card_only)} of {r.strict_scored}: {ids}</li>")
    return (
        "<h3 id='card-only'>Card passes that fail the strict content check</h3>"
        "<p class='note'>The card's rule (BLEU-1 &ge; 0.5 against any reference variant) passes these answers; they "
        "share no content word with the reference, or do not match a one-word reference (docs/scoring.md).</p>"
        f"<ul>{''.join(links)}</ul>"
    )


def _disagreements(report: RunReport) -> str:
    d = report.disagreements
    if len(report.devices) < 2:
        return "<p>One device: nothing to compare.</p>"
    headers, rows = agreement_matrix(report)
    parts = [
        f"<p id='worst-pair'>{_e(worst_pair_text(report) or 'no sample was scored on two devices')}</p>",
        "<p>Agreement matrix: same verdict / identical answer, over the samples both devices have.</p>",
        _table(headers, rows, attrs=" id='agreement'"),
    ]
    for title, groups in (("backend", d.fails_by_backend), ("hardware", d.fails_by_hardware)):
        if groups:
            parts.append(
                f"<p>Fails that pass elsewhere, by {title}: "
                + _e(", ".join(f"{k} {v}" for k, v in groups.items()))
                + "</p>"
            )
    found = disagreement_answers(report)
    flips = [row for row in found if row[0].passed_on and row[0].failed_on]
    answers_only = [row for row in found if not (row[0].passed_on and row[0].failed_on)]
    if flips:
        parts.append(f"<p>{len(flips)} sample(s) pass on one device and fail on another:</p>")
        parts.append(_disagreeing_table(flips, " id='disagreeing'"))
    if answers_only:  # the same verdict everywhere, other words: one line, the answers folded under it
        parts.append(
            f"<details id='answers-differ'><summary>{len(answers_only)} sample(s) with the same verdict on every "
            "device but different answers</summary>" + _disagreeing_table(answers_only, "") + "</details>"
        )
    agree = len(report.samples) - len(d.samples)
    parts.append(
        f"<p id='agree'>{agree} sample(s): the same verdict and the same answer on every device that ran them.</p>"
    )
    return "".join(parts)


def _disagreeing_table(found, attrs: str) -> str:
    """The disagreeing samples with the reference and every device's verdict and answer inline."""
    rows = []
    for x, ref, answers in found:
        said = "".join(
            f"<div><b>{_e(n)}</b> {'✓' if n in x.passed_on else '✗' if n in x.failed_on else '·'} "
            f"<span class='out'>{_e(a[:200])}</span></div>"
            for n, a in answers
        )
        rows.append([f"<a href='#s-{_e(x.id)}'>{_e(x.id)}</a>", _e(x.modality), _e(", ".join(x.passed_on) or "–"),
                     _e(", ".join(x.failed_on) or "–"), f"<span class='out'>{_e(ref[:200])}</span>", said])  # fmt: skip
    return _table(
        ["Sample", "Modality", "Passed on", "Failed on", "Reference", "Answers"], rows, raw=True, attrs=attrs
    )


def render_html(report: RunReport, link_root: str = "") -> str:
    """The page. Its links to the run folder's files (media, device folders) are relative: the page
    is written into the run folder. `link_root` (the folder's file:// URL, ending in /) makes them
    absolute, for a page written elsewhere (`edgefarm report RUN --format html > page.html`)."""
    from .charts import no_chart_note, render_charts, sustained

    title = _e(f"edgefarm run {report.run_id}")
    stamp = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in stamp_items(report))
    mods = modalities(report)
    charts = []
    for key, caption, svg in render_charts(report):
        empty = ENERGY_NOTE if key == "chart-energy" else no_chart_note(report, key)
        body = svg if svg else f"<p class='skip'>{_e(empty)}</p>"
        charts.append(
            f"<figure id='{key}' class='chart'><figcaption>{_e(caption)}</figcaption>{body}</figure>"
        )
    issues = problems(report)
    sharing = sharing_text(report)
    if sharing:
        stamp += f"<dt>CPU sharing</dt><dd>{_e(sharing)}</dd>"
    conditions = conditions_lines(report)
    if conditions:
        stamp += "<dt>Conditions</dt><dd id='conditions'>" + "<br>".join(_e(c) for c in conditions) + "</dd>"
    parts = [
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><meta http-equiv='Content-Security-Policy' content=\"{_CSP}\">",
        f"<title>{title}</title><style>{_CSS}{MATRIX_CSS}</style></head><body><h1>{title}</h1>",
        "<nav><a href='#devices-h'>Devices</a><a href='#charts'>Charts</a><a href='#disagreements'>Disagreements</a><a href='#drill'>Samples</a></nav>",
        f"<dl id='stamp'>{stamp}</dl>",
        "<h2 id='devices-h'>Which device?</h2>",
        f"<p class='note'>{_e(BEST_NOTE)}</p>",
        _devices(report, link_root),
        f"<p class='note'>{_e(INTERVALS_NOTE)}</p>",
        _paired(report),
        matrix_html(report),  # a run of several backends per device ('' without)
        _fidelity(report),
        _units(report),
        _card_only(report),
    ]
    if mods:
        parts += [
            "<h3>Pass by modality (passed/scored)</h3>",
            _table(["Device"] + mods, [[r.device] + [mod_cell(r, m) for m in mods] for r in report.devices]),
        ]
    if issues:
        parts.append(
            "<h2>Problems and notes</h2><ul>" + "".join(f"<li>{_e(p)}</li>" for p in issues) + "</ul>"
        )
    parts += ["<h2 id='charts'>Charts</h2>", *charts]
    parts.append(sustain.html(report.sustain, sustained(report) or ""))  # --sustain ('' without)
    parts += ["<h2 id='disagreements'>Disagreements between devices</h2>", _disagreements(report)]
    parts += ["<h2 id='drill'>Samples on every device</h2>", _drill_down(report, link_root)]
    parts.append(f"<p>{_e(FIGURES_NOTE)}</p><script>{_JS}</script></body></html>\n")
    return "\n".join(parts)
