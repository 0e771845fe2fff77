"""Printers: the RunReport as JSON (the source of truth), Markdown and HTML views. Pure."""

from __future__ import annotations

import dataclasses
import html
import json
from collections.abc import Callable

from ..registry import Registry
from .types import COLUMNS, Column, DeviceRow, RunReport

PRINTERS = Registry[Callable[[RunReport], str]]("report format")
FIGURES_NOTE = (
    "Figures: TTFT and prefill/decode speed are the LiteRT-LM runtime's own (first turn for TTFT; median over "
    "ok samples); init is the engine load; peak RSS is the highest resident memory sampled from /proc during a "
    "sample (GPU driver memory is not included). See docs/run-directory.md in the edgefarm repo."
)
MODALITY_ORDER = ("image", "audio", "text", "multi_turn", "combination", "structured_output", "tool_call")


def to_json(report: RunReport) -> str:
    return json.dumps(dataclasses.asdict(report), indent=2, ensure_ascii=False) + "\n"


def visible_columns(rows: tuple[DeviceRow, ...]) -> list[Column]:
    """Hide columns empty on every device (e.g. SoC when only this host ran)."""
    return [c for c in COLUMNS if any(getattr(r, c.field) not in (None, "") for r in rows)]


def _header(c: Column) -> str:
    return f"{c.label} ({c.unit})" if c.unit else c.label


def modalities(report: RunReport) -> list[str]:
    seen = {m for r in report.devices for m in r.by_modality}
    return [m for m in MODALITY_ORDER if m in seen] + sorted(seen - set(MODALITY_ORDER))


def _mod_cell(row: DeviceRow, mod: str) -> str:
    m = row.by_modality.get(mod)
    if not m:
        return "–"
    return f"{m.get('passed', 0)}/{m.get('total', 0)}"


def _status_cell(row: DeviceRow) -> str:
    return ", ".join(f"{k} {v}" for k, v in row.status_counts.items()) or "–"


def _cell(cell) -> str:
    if cell is None:
        return ""
    mark = {True: "✓", False: "✗", None: "·"}[cell.passed]
    ttft = f" {cell.ttft_ms:.0f} ms" if cell.ttft_ms is not None else ""
    return f"{mark} {cell.status}{ttft}" if cell.status != "ok" else f"{mark}{ttft}"


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(_md_escape(c) for c in row) + " |" for row in rows]
    return out


def to_markdown(report: RunReport) -> str:
    run = report.run
    model, dataset = run.get("model", {}), run.get("dataset", {})
    lines = [f"# edgefarm run {report.run_id}", ""]
    lines += [
        (
            f"- model: `{model.get('path', '')}` (sha256 {str(model.get('sha256', ''))[:12]}, "
            f"{model.get('size_bytes', 0) / 1e6:.2f} MB, {', '.join(model.get('modalities', []))})"
        ),
        (
            f"- dataset: `{dataset.get('path', '')}` ({dataset.get('format', '')}, "
            f"{dataset.get('samples_run', '?')} of {dataset.get('samples_total', '?')} samples)"
        ),
        f"- started {run.get('started_at', '')} on {run.get('host', {}).get('hostname', '')}",
        "",
    ]
    cols = visible_columns(report.devices)
    lines += ["## Devices", ""]
    lines += _md_table(
        [_header(c) for c in cols] + ["Verdict", "Status"],
        [
            [c.render(getattr(r, c.field)) for c in cols] + [r.verdict or "–", _status_cell(r)]
            for r in report.devices
        ],
    )
    mods = modalities(report)
    if mods:
        lines += ["", "## Pass by modality (passed/scored)", ""]
        lines += _md_table(
            ["Device"] + mods, [[r.device] + [_mod_cell(r, m) for m in mods] for r in report.devices]
        )
    metric_names = sorted({k for r in report.devices for k in r.metrics})
    if metric_names:
        lines += ["", "## Metrics", ""]
        lines += _md_table(
            ["Device"] + metric_names,
            [
                [r.device] + [f"{r.metrics[k]:.4f}" if k in r.metrics else "–" for k in metric_names]
                for r in report.devices
            ],
        )
    failed = [r for r in report.devices if r.error]
    if failed or report.unusable or report.notes:
        lines += ["", "## Problems and notes", ""]
        lines += [f"- **{r.device}** failed: {r.error.splitlines()[0]}" for r in failed]
        lines += [
            f"- **{u.get('name')}** not used ({u.get('state')}): {u.get('problem')}" for u in report.unusable
        ]
        lines += [f"- {n}" for n in report.notes]
    if report.samples:
        names = [r.device for r in report.devices]
        lines += ["", "## Samples (✓ pass, ✗ fail, · not scored; TTFT)", ""]
        lines += _md_table(
            ["Sample", "Modality"] + names,
            [[s.id, s.modality] + [_cell(s.cells.get(n)) for n in names] for s in report.samples],
        )
    lines += ["", FIGURES_NOTE, ""]
    return "\n".join(lines)


_CSS = """body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}
td,th{border:1px solid #ccc;padding:.3em .6em;text-align:right}th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
.pass{color:#176b2c}.fail{color:#a11}.skip{color:#777}details{margin:1em 0}code{background:#f6f6f6;padding:0 .2em}"""


def _html_table(headers: list[str], rows: list[list[str]], raw: bool = False) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{c if raw else html.escape(c)}</td>" for c in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _html_cell(cell) -> str:
    if cell is None:
        return ""
    cls = {True: "pass", False: "fail", None: "skip"}[cell.passed]
    return f'<span class="{cls}" title="{html.escape(cell.output)}">{html.escape(_cell(cell))}</span>'


def to_html(report: RunReport) -> str:
    cols = visible_columns(report.devices)
    mods = modalities(report)
    run_id = html.escape(report.run_id)
    model = html.escape(str(report.run.get("model", {}).get("path", "")))
    dataset = html.escape(str(report.run.get("dataset", {}).get("path", "")))
    parts = [
        (
            f"<!doctype html><html><head><meta charset='utf-8'><title>edgefarm {run_id}</title>"
            f"<style>{_CSS}</style></head><body><h1>edgefarm run {run_id}</h1>"
        ),
        f"<p>model <code>{model}</code>, dataset <code>{dataset}</code></p>",
        "<h2>Devices</h2>",
        _html_table(
            [_header(c) for c in cols] + ["Verdict", "Status"],
            [
                [c.render(getattr(r, c.field)) for c in cols] + [r.verdict or "–", _status_cell(r)]
                for r in report.devices
            ],
        ),
    ]
    if mods:
        parts += [
            "<h2>Pass by modality</h2>",
            _html_table(
                ["Device"] + mods, [[r.device] + [_mod_cell(r, m) for m in mods] for r in report.devices]
            ),
        ]
    problems = [f"{r.device} failed: {r.error}" for r in report.devices if r.error]
    problems += [f"{u.get('name')} not used ({u.get('state')}): {u.get('problem')}" for u in report.unusable]
    problems += list(report.notes)
    if problems:
        parts.append(
            "<h2>Problems and notes</h2><ul>"
            + "".join(f"<li>{html.escape(p)}</li>" for p in problems)
            + "</ul>"
        )
    if report.samples:
        names = [r.device for r in report.devices]
        parts += [
            "<details open><summary>Samples (hover a cell for the answer)</summary>",
            _html_table(
                ["Sample", "Modality"] + names,
                [
                    [html.escape(s.id), html.escape(s.modality)] + [_html_cell(s.cells.get(n)) for n in names]
                    for s in report.samples
                ],
                raw=True,
            ),
            "</details>",
        ]
    parts.append(f"<p>{html.escape(FIGURES_NOTE)}</p></body></html>\n")
    return "\n".join(parts)


PRINTERS.add("json", to_json)
PRINTERS.add("md", to_markdown)
PRINTERS.add("html", to_html)
