"""The backend matrix in the report's views (pure; docs/matrix.md): the matrix as a table of short lines
(the terminal, report.md, report.html read the same texts), the flagged cells' flips with both answers
side by side (report.md, report.html's drill-down), and the one note that says how to read it.
report/matrix.py computes; nothing here decides a flag or a star."""

from __future__ import annotations

import html

from ..catalogue import FIGURE
from ..stats import ALPHA
from .figures import Table
from .types.matrix import BackendMatrix, MatrixCell
from .types.run_report import RunReport

STAR = "★"
FLAG = "⚑"
NOTE = (
    f"Rows: devices; columns: backends, each run on the same phone, samples and settings. Per cell: pass rate "
    f"(95% Wilson), against the same device's CPU on the same samples the paired accuracy difference "
    f"(points, 95%), McNemar's exact p and the samples whose verdict flips; time per sample against the "
    f"CPU's (paired ratio), decode speed, peak memory, energy. {FLAG}: McNemar rejects at {ALPHA:g} (this "
    f"backend answers differently from the CPU, not by chance); {STAR}: the device's best backend, only "
    "when the paired test separates it. A cell that did not run says why. docs/matrix.md"
)
WIDTH = 22  # characters of a cell's line: 4 devices x 3 backends fit 100 terminal columns


def _p(p: float) -> str:
    return "p<0.001" if p < 0.001 else f"p={p:.2g}"


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v:.1f}%"


def _figure(c: MatrixCell, field: str) -> str | None:
    """A figure of the cell as the catalogue writes it (`7 tok/s`), None when the unit has none."""
    v = c.figures.get(field)
    if v is None:
        return None
    col = FIGURE[field].column
    return f"{col.render(v)} {col.unit}".strip()


def cell_lines(c: MatrixCell) -> list[str]:
    """A cell as short lines (at most WIDTH characters each)."""
    if not c.ran:
        kind = c.reason.split(":", 1)[0] if c.reason else "no samples"
        return ["not run", kind[:WIDTH]]
    star = lambda field: f" {STAR}" if c.marks.get(field) == "best" else ""
    lines = [f"pass {_pct(c.pass_rate_pct)}{star('pass_rate_pct')}"]
    if c.pass_ci is not None:
        lines.append(f"({c.pass_ci[0]:.1f}–{c.pass_ci[1]:.1f})")
    if c.reason:  # a fallback on some rows: those answered on another engine than asked
        lines.append(f"FELL BACK to {c.reason.rsplit(' ', 1)[-1]}"[:WIDTH])
    if c.against and c.diff_pts is not None and c.p_value is not None:
        lines.append(f"{FLAG + ' ' if c.flagged else ''}Δ{c.diff_pts:+.1f}pt {_p(c.p_value)}"[:WIDTH])
        if c.diff_ci is not None:
            lines.append(f"  ({c.diff_ci[0]:+.1f}…{c.diff_ci[1]:+.1f})")
        lines.append(f"{len(c.flips)} flip(s) vs cpu")
    if c.speed_ratio is not None:  # time per sample, paired against the CPU's
        lines.append(f"time {c.speed_ratio:.2f}x cpu{star('sample_ms_p50')}"[:WIDTH])
    elif (t := _figure(c, "sample_ms_p50")) is not None:
        lines.append(f"{t}/sample{star('sample_ms_p50')}")
    speed = " · ".join(x for x in (_figure(c, "decode_tps_p50"), _figure(c, "peak_rss_mb")) if x)
    if speed:
        lines.append(speed[:WIDTH])
    if (energy := _figure(c, "energy_j_p50")) is not None:
        lines.append(f"{energy}/sample")
    if c.validity_pct is not None:
        lines.append(f"parses {c.validity_pct:.0f}%")
    if c.mean_abs_dlogp is not None:
        lines.append(f"|Δlogp| {c.mean_abs_dlogp:.3g}/tok"[:WIDTH])
    return lines


def matrix_table(report: RunReport) -> Table | None:
    m = report.matrix
    if m is None:
        return None
    rows = []
    for device in m.devices:
        cells = [m.cell(device, b) for b in m.backends]
        rows.append((device, *("\n".join(cell_lines(c)) if c is not None else "—" for c in cells)))
    return Table("Backend matrix", ("Device", *m.backends), tuple(rows), NOTE)


def not_run_lines(m: BackendMatrix) -> list[str]:
    """Each cell that did not run, with the runtime's words."""
    return [f"{c.device}/{c.backend} did not run: {c.reason or 'no samples'}" for c in m.not_run]


def flip_lines(m: BackendMatrix) -> list[str]:
    """Per flagged cell, the samples whose verdict flips (the terminal's; md and html list the answers)."""
    return [f"{c.device}/{c.backend} {FLAG} {len(c.flips)} verdict(s) differ from {c.against}: "
            + ", ".join(f.id for f in c.flips) for c in m.cells if c.flagged]  # fmt: skip


def flip_table(report: RunReport, cut: int = 160) -> Table | None:
    """Every flip of every cell compared with its CPU, both answers side by side."""
    m = report.matrix
    if m is None:
        return None
    rows = tuple(
        (f"{c.device}/{c.backend}", f.id, "✓" if f.cpu_passed else "✗", "✓" if f.passed else "✗",
         "—" if f.first_diff is None else str(f.first_diff), f.cpu_output[:cut], f.output[:cut])
        for c in m.cells for f in c.flips
    )  # fmt: skip
    if not rows:
        return None
    headers = ("Cell", "Sample", "CPU", "Backend", "First differing token", "Answer on the CPU",
               "Answer on the backend")  # fmt: skip
    return Table("Verdicts that flip against the same device's CPU", headers, rows,
                 "First differing token: --fidelity runs only (the answers' token ids); — otherwise.")  # fmt: skip


def matrix_markdown(report: RunReport) -> list[str]:
    table = matrix_table(report)
    if table is None:
        return []

    def md(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", "<br>")

    lines = ["", f"## {table.title}", "", "| " + " | ".join(table.headers) + " |",
             "|" + "---|" * len(table.headers)]  # fmt: skip
    lines += ["| " + " | ".join(md(x) for x in row) + " |" for row in table.rows]
    lines += ["", table.note]
    lines += [f"- {x}" for x in not_run_lines(report.matrix)]
    flips = flip_table(report)
    if flips is not None:
        lines += ["", f"### {flips.title}", "", "| " + " | ".join(flips.headers) + " |",
                  "|" + "---|" * len(flips.headers)]  # fmt: skip
        lines += ["| " + " | ".join(md(x) for x in row) + " |" for row in flips.rows]
        lines += ["", flips.note]
    return lines


def matrix_html(report: RunReport) -> str:
    """The matrix (a flagged cell shaded, its flips in a drill-down under the table, answers side by side)."""
    m, table = report.matrix, matrix_table(report)
    if m is None or table is None:
        return ""
    e = lambda x: html.escape(str(x), quote=True)
    head = "".join(f"<th>{e(h)}</th>" for h in table.headers)
    body = ""
    for device in m.devices:
        body += f"<tr><th>{e(device)}</th>"
        for b in m.backends:
            c = m.cell(device, b)
            if c is None:
                body += "<td>—</td>"
                continue
            cls = "flag" if c.flagged else "notrun" if not c.ran else ""
            title = f" title='{e(c.reason)}'" if c.reason else ""
            text = "<br>".join(e(x) for x in cell_lines(c))
            link = f"<br><a href='#flips-{e(c.unit)}'>the flips</a>" if c.flips else ""
            body += f"<td class='{cls}'{title}>{text}{link}</td>"
        body += "</tr>"
    grid = f"<table class='matrix'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    out = [f"<h2 id='matrix'>{e(table.title)}</h2>", grid, f"<p class='note'>{e(table.note)}</p>"]
    out += [f"<p class='skip'>{e(x)}</p>" for x in not_run_lines(m)]
    for c in m.cells:
        if not c.flips:
            continue
        rows = "".join(
            f"<tr><td>{e(f.id)}</td><td>{'✓' if f.cpu_passed else '✗'}</td><td>{'✓' if f.passed else '✗'}</td>"
            f"<td>{'—' if f.first_diff is None else f.first_diff}</td><td class='ans'>{e(f.cpu_output)}</td>"
            f"<td class='ans'>{e(f.output)}</td></tr>" for f in c.flips
        )  # fmt: skip
        out.append(
            f"<details id='flips-{e(c.unit)}'{' open' if c.flagged else ''}><summary>{e(c.device)}/{e(c.backend)}: "
            f"{len(c.flips)} verdict(s) differ from {e(c.against)}{' ' + FLAG if c.flagged else ''}</summary>"
            f"<table class='flips'><thead><tr><th>Sample</th><th>CPU</th><th>{e(c.backend)}</th><th>First differing "
            f"token</th><th>Answer on the CPU</th><th>Answer on {e(c.backend)}</th></tr></thead><tbody>{rows}</tbody>"
            "</table></details>"
        )  # fmt: skip
    return "\n".join(out)


CSS = (
    "table.matrix td{vertical-align:top;white-space:nowrap;font-size:.85em;text-align:left}"
    "table.matrix td.flag{background:#fde2e2}table.matrix td.notrun{color:#777;background:#f3f3f3}"
    "table.flips td.ans{max-width:28em;overflow-wrap:anywhere}"
    # a matrix run has a column per unit in the agreement table (12 for 4 phones x 3 backends): it scrolls
    # in its own box, the page never sideways
    "#agreement{display:block;overflow-x:auto;max-width:100%}"
)
