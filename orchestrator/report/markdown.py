"""report.md: the same tables as report.html, as Markdown (pure)."""

from __future__ import annotations

from .. import sustain
from .cells import BEST_NOTE, Cell, device_table, mod_cell, modalities, sample_cell, shared_settings
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
from .figures import ENERGY_NOTE, energy_table, latency_table, memory_table, over_run_table
from .matrix_views import matrix_markdown
from .types.run_report import RunReport
from .units import UNITS_NOTE, units_table


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    out = [
        "| " + " | ".join(_md_escape(h) for h in headers) + " |",
        "|" + "|".join("---" for _ in headers) + "|",
    ]
    out += ["| " + " | ".join(_md_escape(c) for c in row) + " |" for row in rows]
    return out


def _md_figure(t) -> list[str]:
    lines = ["", f"## {t.title}", ""] + _md_table(list(t.headers), [list(r) for r in t.rows])
    return lines + (["", t.note] if t.note else [])


def _md_cell(c: Cell) -> str:
    return f"**{c.text}** ★" if c.best else c.marked()


def to_markdown(report: RunReport) -> str:
    lines = [f"# edgefarm run {report.run_id}", ""]
    lines += [f"- {k}: {v}" for k, v in stamp_items(report)]
    sharing = sharing_text(report)
    if sharing:
        lines.append(f"- CPU sharing: {sharing}")
    headers, rows = device_table(report, wide=True)
    lines += ["", f"## Which device? ({BEST_NOTE})", ""]
    shared = shared_settings(report)
    if shared:
        lines += ["Same on every device: " + " · ".join(text for _, text in shared), ""]
    lines += _md_table(headers, [[_md_cell(c) for c in row] for row in rows])
    lines += ["", INTERVALS_NOTE]
    paired = paired_lines(report)
    if paired:
        lines += ["", f"## Against the baseline ({report.baseline}), on the same samples", ""]
        lines += [f"- {p}" for p in paired]
    lines += matrix_markdown(report)  # a run of several backends per device ([] without)
    for table in (fidelity_table(report), worst_table(report)):  # --fidelity runs only
        if table is not None:
            lines += _md_figure(table)
    conditions = conditions_lines(report)
    if conditions:
        lines += ["", "## Conditions (thermal state, --settle: docs/conditions.md)", ""]
        lines += [f"- {c}" for c in conditions]
    for g in report.units:  # --units
        lines += ["", f"## Units of {g.name} (--units)", ""]
        lines += _md_table(*units_table(g))
        lines += ["", UNITS_NOTE] + [f"- {o}" for o in g.outliers]
    card_only = card_only_lines(report)
    if card_only:
        lines += ["", "## Passes by the card's rule that fail the strict content check", ""]
        lines += [f"- {c}" for c in card_only]
    mods = modalities(report)
    if mods:
        lines += ["", "## Pass by modality (passed/scored)", ""]
        lines += _md_table(
            ["Device"] + mods, [[r.device] + [mod_cell(r, m) for m in mods] for r in report.devices]
        )
    for table in (latency_table(report), memory_table(report), over_run_table(report)):
        lines += _md_figure(table)
    energy = energy_table(report)
    lines += _md_figure(energy) if energy else ["", ENERGY_NOTE]
    lines += sustain.markdown(report.sustain)  # --sustain: the curve per device ([] without)
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
            [[s.id, s.modality] + [sample_cell(s.cells.get(n)) for n in names] for s in report.samples],
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
    found = disagreement_answers(report)
    flips = [row for row in found if row[0].passed_on and row[0].failed_on]
    answers_only = [row[0].id for row in found if not (row[0].passed_on and row[0].failed_on)]
    if flips:
        lines += ["", f"{len(flips)} sample(s) pass on one device and fail on another:", ""]
        lines += _md_table(
            ["Sample", "Modality", "Passed on", "Failed on", "Reference", "Answers"],
            [
                [x.id, x.modality, ", ".join(x.passed_on) or "–", ", ".join(x.failed_on) or "–",
                 ref[:80], " · ".join(f"{n}: {a[:80]}" for n, a in answers)]
                for x, ref, answers in flips
            ],
        )  # fmt: skip
    if answers_only:  # the same verdict everywhere, other words: one line (report.html has the answers)
        lines += ["", f"{len(answers_only)} sample(s) with the same verdict on every device but different answers: "
                  + ", ".join(answers_only)]  # fmt: skip
    agree = len(report.samples) - len(d.samples)
    lines += ["", f"{agree} sample(s): the same verdict and the same answer on every device that ran them."]
    return lines
