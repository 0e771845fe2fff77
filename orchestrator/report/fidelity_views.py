"""--fidelity in the report's views (pure): the device table's column, the fidelity table, the largest
departures side by side, and the per-cell figures of the flat exports (report/fidelity.py computes)."""

from __future__ import annotations

from collections.abc import Mapping

from .fidelity import DIFFERENT, MAX_NOISE_NATS, MEAN_NOISE_NATS, NONE, SAME, UNDECIDED
from .figures import Table
from .types.fidelity import DeviceFidelity, FidelitySample
from .types.run_report import RunReport


def _nats(v: float | None, ci: tuple[float, float] | None = None) -> str:
    if v is None:
        return NONE
    text = f"{v:.4g}"
    return f"{text} ({ci[0]:.4g}–{ci[1]:.4g})" if ci else text


def summary_cell(f: DeviceFidelity) -> str:
    """The device table's column: the verdict and the mean |Δ log p|, or `—` and why."""
    if f.reason == "reference":
        return "reference"
    if f.mean_abs_dlogp is None:
        return f"{NONE} {f.verdict + ': ' if f.verdict else ''}{f.reason}"
    short = {SAME: "same", DIFFERENT: "DIFFERS", UNDECIDED: "undecided"}.get(f.verdict, f.verdict)
    return f"{short}, mean |Δ log p| {_nats(f.mean_abs_dlogp)}"


def fidelity_table(report: RunReport) -> Table | None:
    fr = report.fidelity
    if fr is None:
        return None
    rows = []
    for f in fr.devices:
        ident = f.identical_pct
        ci = f.intervals.get("identical_pct")
        verdict = f.verdict or (NONE if f.reason != "reference" else "reference")
        if f.verdict == DIFFERENT and f.worst:
            verdict += f" (largest: {', '.join(f.worst)})"
        if f.reason and f.reason != "reference":
            verdict += (": " if verdict == NONE else " — ") + f.reason
        rows.append((
            f.device, str(f.scored), str(f.tokens),
            _nats(f.mean_abs_dlogp, f.intervals.get("mean_abs_dlogp")),
            _nats(f.max_abs_dlogp, f.intervals.get("max_abs_dlogp")),
            NONE if ident is None else f"{ident:.1f} ({ci[0]:.1f}–{ci[1]:.1f}) of {f.answers_compared}" if ci else f"{ident:.1f}",
            NONE if f.first_diff_median is None else f"{f.first_diff_median:g}",
            verdict,
        ))  # fmt: skip
    note = (
        f"Against {fr.reference}: per-token |Δ log p| (nats) of the reference answers scored teacher-forced "
        f"from the same prompts; 95% cluster bootstrap over samples. Same model within float noise: mean's "
        f"interval at or under {MEAN_NOISE_NATS:g} and every token within {MAX_NOISE_NATS:g}; computes "
        "differently: mean's interval above it, a token beyond it, or another token count. docs/fidelity.md"
    )
    headers = ("Device", "Samples scored", "Tokens", "Mean |Δ log p|", "Max |Δ log p|",
               "Identical answers (%)", "First differing token (median)", "Verdict")  # fmt: skip
    return Table(f"Fidelity against {fr.reference}", headers, tuple(rows), note)


def worst_table(report: RunReport) -> Table | None:
    """The samples with the largest departures, side by side: the reference device's answer and the device's."""
    fr = report.fidelity
    if fr is None:
        return None
    by_id = {s.id: s for s in report.samples}
    rows = []
    for f in fr.devices:
        per = {c.id: c for c in f.samples}
        for sid in f.worst:
            s, c = by_id.get(sid), per[sid]
            ref_cell, dev_cell = (s.cells.get(fr.reference), s.cells.get(f.device)) if s else (None, None)
            rows.append((
                f.device, sid, _nats(c.max_abs_dlogp), str(c.worst_token),
                NONE if c.first_diff is None else str(c.first_diff),
                (s.reference if s else "")[:120],
                (ref_cell.output if ref_cell else "")[:120], (dev_cell.output if dev_cell else "")[:120],
            ))  # fmt: skip
    if not rows:
        return None
    headers = ("Device", "Sample", "Max |Δ log p|", "At token", "First differing answer token", "Reference answer",
               f"Answer on {fr.reference}", "Answer on the device")  # fmt: skip
    return Table("Largest departures, side by side", headers, tuple(rows))


def cell_figures(report: RunReport) -> Mapping[tuple[str, str], FidelitySample]:
    """(device, sample id) -> the sample's comparison, for the flat exports."""
    if report.fidelity is None:
        return {}
    return {(f.device, c.id): c for f in report.fidelity.devices for c in f.samples}
