"""Printers: the RunReport as JSON (the source of truth) and its views (md, html, csv, jsonl, term).

Each printer is `render(report) -> str`, pure; the caller writes the file. md and html share the
helpers here (the run stamp, problems, the agreement matrix), so a fact is spelled once.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping

from ..registry import Registry
from .types import COLUMNS, Column, DeviceRow, RunReport, SampleCell

PRINTERS = Registry[Callable[[RunReport], str]]("report format")
FIGURES_NOTE = (
    "Figures: TTFT and prefill/decode speed are the LiteRT-LM runtime's own (first turn for TTFT; median over "
    "ok samples); init is the engine load; peak RSS is the highest resident memory sampled from /proc during a "
    "sample (GPU driver memory is not included). See docs/run-directory.md in the edgefarm repo."
)
MODALITY_ORDER = ("image", "audio", "text", "multi_turn", "combination", "structured_output", "tool_call")


def to_json(report: RunReport) -> str:
    """report.json: each top-level key on a line of its own, and each item of a top-level list (a
    device, a sample) on its own line, compact. `indent=2` made Python use its pure-Python encoder:
    67 ms of the 90 ms report.json took for 16 devices x 200 samples, against 18 ms compact."""
    data = _plain(report)
    if not isinstance(data, dict):
        return json.dumps(data, ensure_ascii=False) + "\n"

    def dump(value) -> str:
        return json.dumps(value, ensure_ascii=False)

    def field(key: str, value) -> str:
        if isinstance(value, list) and value:
            return f"  {dump(key)}: [\n" + ",\n".join(f"    {dump(v)}" for v in value) + "\n  ]"
        return f"  {dump(key)}: {dump(value)}"

    return "{\n" + ",\n".join(field(k, v) for k, v in data.items()) + "\n}\n"


_SCALARS = frozenset((str, int, float, bool, type(None)))
_FIELDS: dict[type, tuple[str, ...]] = {}  # a dataclass -> its field names


def _plain(value):
    """dataclasses.asdict without its deep copies (the same JSON, 3-4x faster on a farm's report).
    Scalars (most values) return at once and field names are looked up once per class: half the
    time of asking is_dataclass of every value."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    names = _FIELDS.get(kind)
    if names is None and dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(value))
    if names is not None:
        return {n: _plain(getattr(value, n)) for n in names}
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


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


def _cell(cell: SampleCell | None) -> str:
    if cell is None:
        return ""
    mark = {True: "✓", False: "✗", None: "·"}[cell.passed]
    ttft = f" {cell.ttft_ms:.0f} ms" if cell.ttft_ms is not None else ""
    text = f"{mark} {cell.status}{ttft}" if cell.status != "ok" else f"{mark}{ttft}"
    return text + (" (stand-in)" if cell.stood_in else "") + (f" (on {cell.ran_on})" if cell.ran_on else "")


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(_md_escape(c) for c in row) + " |" for row in rows]
    return out


def _size(n: int | None) -> str:
    return "?" if n is None else f"{n / 1e6:.2f} MB" if n < 1e9 else f"{n / 1e9:.2f} GB"


def stamp_items(report: RunReport) -> list[tuple[str, str]]:
    """The run stamp as (label, text) pairs: the same block heads every format."""
    st = report.stamp
    skipped = ", ".join(f"{d} {n}" for d, n in st.skipped.items()) or "none"
    items = [
        ("model", f"{st.model_path} ({_size(st.model_size_bytes)}, sha256 {st.model_sha256 or '?'})"),
        ("dataset", f"{st.dataset_path} ({st.dataset_format}, sha256 {st.dataset_sha256[:16] or '?'})"),
        ("samples", f"{st.samples_run} run of {st.samples_total}; not scored per device: {skipped}"),
        ("time", f"{st.started_at or '?'} → {st.finished_at or '?'} (UTC)"),
        ("host", st.host or "?"),
        ("versions", ", ".join(f"{k} {v}" for k, v in st.versions.items()) or "?"),
        ("backends", ", ".join(st.backends) or "?"),
        ("flags", ", ".join(f"{k}={v}" for k, v in st.flags.items()) or "none"),
    ]
    by_identity: dict[str, list[str]] = {}
    for r in report.devices:
        if r.runner or r.runtime or r.runner_sha256:
            text = (
                f"{r.runner or '?'}{' sha256 ' + r.runner_sha256[:12] if r.runner_sha256 else ''}"
                f"{', runtime ' + r.runtime if r.runtime else ''}"
                f"{f', {r.model_loads} model load(s)' if r.model_loads is not None else ''}"
            )
            by_identity.setdefault(text, []).append(r.device)
    if by_identity:  # devices with the same runner stamp share one entry
        items.append(
            ("runners", "; ".join(f"{', '.join(names)}: {text}" for text, names in by_identity.items()))
        )
    facts = (report.run.get("model") or {}).get("facts") or {}
    if facts.get("predicted_floor_mb") is not None:  # run.json: model_facts.py, beside the measured peaks
        peaks = ", ".join(f"{r.device} {r.peak_rss_mb:.0f} MB" for r in report.devices if r.peak_rss_mb)
        floor = (
            f"{facts['predicted_floor_mb']} MB predicted (weights {facts.get('weights_mb')} MB + KV cache "
            f"{facts.get('kv_cache_mb')} MB at {facts.get('token_limit')} tokens); measured peak: {peaks or 'none'}"
        )
        items.append(("memory floor", floor))
    return items


def problems(report: RunReport) -> list[str]:
    out = [f"{r.device} failed: {r.error.splitlines()[0]}" for r in report.devices if r.error]
    out += [
        f"{r.device}: {r.scoring_errors} sample(s) could not be scored (counted as failed)"
        for r in report.devices
        if r.scoring_errors
    ]
    out += [f"{r.device}: {r.scoring_problem}" for r in report.devices if r.scoring_problem]
    out += [f"{u.get('name')} not used ({u.get('state')}): {u.get('problem')}" for u in report.unusable]
    return out + list(report.notes)


def worst_pair_text(report: RunReport) -> str:
    p = report.disagreements.worst_pair()
    if p is None:
        return ""
    out = f", identical answers on {p.output_pct}% of {p.both_ok}" if p.output_pct is not None else ""
    return f"least agreement: {p.a} vs {p.b}: same verdict on {p.verdict_pct}% of {p.common} samples{out}"


def agreement_matrix(report: RunReport) -> tuple[list[str], list[list[str]]]:
    """Devices x devices: % of common scored samples with the same verdict (/ % identical answers)."""
    names = [r.device for r in report.devices]
    cell = {}
    for p in report.disagreements.pairs:
        text = "–" if p.verdict_pct is None else f"{p.verdict_pct:.0f}%"
        if p.output_pct is not None:
            text += f" / {p.output_pct:.0f}%"
        cell[(p.a, p.b)] = cell[(p.b, p.a)] = text
    return ["Device"] + names, [
        [a] + ["·" if a == b else cell.get((a, b), "–") for b in names] for a in names
    ]


def _md_figure(t) -> list[str]:
    lines = ["", f"## {t.title}", ""] + _md_table(list(t.headers), [list(r) for r in t.rows])
    return lines + (["", t.note] if t.note else [])


def to_markdown(report: RunReport) -> str:
    from .figures import ENERGY_NOTE, energy_table, latency_table, memory_table, over_run_table

    lines = [f"# edgefarm run {report.run_id}", ""]
    lines += [f"- {k}: {v}" for k, v in stamp_items(report)]
    cols = visible_columns(report.devices)
    lines += ["", "## Devices", ""]
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
    for table in (latency_table(report), memory_table(report), over_run_table(report)):
        lines += _md_figure(table)
    energy = energy_table(report)
    lines += _md_figure(energy) if energy else ["", ENERGY_NOTE]
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
    lines += _md_disagreements(report)
    issues = problems(report)
    if issues:
        lines += ["", "## Problems and notes", ""] + [f"- {p}" for p in issues]
    if report.samples:
        names = [r.device for r in report.devices]
        lines += ["", "## Samples (✓ pass, ✗ fail, · not scored; TTFT)", ""]
        lines += _md_table(
            ["Sample", "Modality"] + names,
            [[s.id, s.modality] + [_cell(s.cells.get(n)) for n in names] for s in report.samples],
        )
    lines += ["", FIGURES_NOTE, ""]
    return "\n".join(lines)


def _md_disagreements(report: RunReport) -> list[str]:
    d = report.disagreements
    if len(report.devices) < 2:
        return []
    lines = ["", "## Disagreements between devices", ""]
    worst = worst_pair_text(report)
    lines += [worst or "no sample was scored on two devices", ""]
    headers, rows = agreement_matrix(report)
    lines += ["Agreement: same verdict / identical answer, over the samples both devices have.", ""]
    lines += _md_table(headers, rows)
    for title, groups in (("backend", d.fails_by_backend), ("hardware", d.fails_by_hardware)):
        if groups:
            lines += [
                "",
                f"Fails that pass elsewhere, by {title}: " + ", ".join(f"{k} {v}" for k, v in groups.items()),
            ]
    if d.samples:
        lines += ["", f"{len(d.samples)} sample(s) disagree:", ""]
        lines += _md_table(
            ["Sample", "Modality", "Passed on", "Failed on", "Distinct answers"],
            [
                [
                    x.id,
                    x.modality,
                    ", ".join(x.passed_on) or "–",
                    ", ".join(x.failed_on) or "–",
                    str(x.output_groups),
                ]
                for x in d.samples
            ],
        )
    return lines


def to_html(report: RunReport) -> str:
    from .html import render_html

    return render_html(report)


def _rows(report: RunReport) -> str:
    from .tables import to_csv

    return to_csv(report)


def _jsonl(report: RunReport) -> str:
    from .tables import to_jsonl

    return to_jsonl(report)


def _term(report: RunReport) -> str:
    from .terminal import to_text

    return to_text(report)


PRINTERS.add("json", to_json)
PRINTERS.add("md", to_markdown)
PRINTERS.add("html", to_html)
PRINTERS.add("csv", _rows)
PRINTERS.add("jsonl", _jsonl)
PRINTERS.add("term", _term)
