"""The facts every view states in words: the run stamp, problems, the paired comparison against the
baseline, the strict check's card-only passes, the host's CPU sharing, the agreement matrix. Pure."""

from __future__ import annotations

from ..telemetry.conditions import RunConditions
from .paired import flips_text, ratio_text
from .types.disagreements import Disagreement
from .types.run_report import RunReport

FIGURES_NOTE = (
    "Figures: TTFT and prefill/decode speed are the LiteRT-LM runtime's own (first turn for TTFT; median over "
    "ok samples); init is the engine load; peak RSS is the highest resident memory sampled from /proc during a "
    "sample (GPU driver memory is not included). See docs/run-directory.md in the edgefarm repo."
)
INTERVALS_NOTE = (
    "Intervals: 95%. Pass rates: Wilson score interval. Latency, speed and energy medians/p90: percentile "
    "bootstrap over the samples (whole samples with their repeats under --repeat), 2000 resamples, seed 0. "
    "Paired comparisons: geometric mean of per-sample ratios with a bootstrap interval; verdict flips: exact "
    "McNemar. Speed-up: the baseline's time per sample over the device's, on the same samples. See "
    "docs/run-directory.md."
)


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
    merged = report.run.get("merged_from")
    for m in merged if isinstance(merged, list) else ():  # report --merge: each run's own window, flags, host
        if isinstance(m, dict):
            flags = ", ".join(f"{k}={v}" for k, v in (m.get("flags") or {}).items()) or "none"
            window = f"{m.get('started_at') or '?'} → {m.get('finished_at') or '?'} (UTC)"
            devices = ", ".join(m.get("devices") or [])
            items.append(
                (
                    f"run {m.get('run_id')}",
                    f"host {m.get('host') or '?'}; {window}; flags {flags}; devices {devices}",
                )
            )
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
    conditions = conditions_text(run_conditions(report))
    if conditions:  # what moves figures between runs (docs/conditions.md)
        items.append(("conditions", conditions))
    facts = (report.run.get("model") or {}).get("facts") or {}
    if facts.get("predicted_floor_mb") is not None:  # run.json: model_facts.py, beside the measured peaks
        peaks = ", ".join(f"{r.device} {r.peak_rss_mb:.0f} MB" for r in report.devices if r.peak_rss_mb)
        floor = (
            f"{facts['predicted_floor_mb']} MB predicted (weights {facts.get('weights_mb')} MB + KV cache "
            f"{facts.get('kv_cache_mb')} MB at {facts.get('token_limit')} tokens); measured peak: {peaks or 'none'}"
        )
        items.append(("memory floor", floor))
    return items


def run_conditions(report: RunReport) -> RunConditions | None:
    """run.json's conditions (None: a run of an edgefarm that did not record them)."""
    return RunConditions.from_dict(report.run.get("conditions"))


def conditions_text(conditions: RunConditions | None) -> str:
    """A run's conditions in one line, as every page states them: a run's report and a bench's ('' when
    not recorded: a run of an older edgefarm)."""
    return "; ".join(conditions.lines()) if conditions is not None else ""


def conditions_problems(conditions: RunConditions | None) -> list[str]:
    """What was bad during a run or a bench (a loaded host, a device that started hot or throttled), by
    the rules (telemetry/conditions.py)."""
    return conditions.problems() if conditions is not None else []


def problems(report: RunReport) -> list[str]:
    out = [f"{r.device} failed: {r.error.splitlines()[0]}" for r in report.devices if r.error]
    out += conditions_problems(run_conditions(report))
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


def paired_lines(report: RunReport) -> list[str]:
    """Each device against the baseline on the same samples: flips, then each figure's ratio."""
    out = []
    for p in report.paired:
        figs = "; ".join(f"{f.label} {ratio_text(f, p.a, p.b)}" for f in p.figures)
        out.append(f"{p.b} vs {p.a}: verdicts {flips_text(p)}" + (f"; {figs}" if figs else ""))
        if (p.strict_a_only, p.strict_b_only) != (p.a_only, p.b_only):  # only when it tells more
            out.append(f"{p.b} vs {p.a}, strict check: {p.strict_a_only} pass→fail, {p.strict_b_only} fail→pass "
                       f"(McNemar p={p.strict_p_value:.3g})")  # fmt: skip
    return out


def card_only_lines(report: RunReport) -> list[str]:
    """The rows the card passes and the strict content check fails, per device."""
    return [
        f"{r.device}: {len(r.card_only)} of {r.strict_scored} card passes carry no content by the strict check: "
        + ", ".join(r.card_only)
        for r in report.devices
        if r.card_only
    ]


def sharing_text(report: RunReport) -> str:
    """run.json's host_sharing: which devices shared this host's CPU, one after another or together."""
    parts = []
    for h in report.host_sharing:
        devices = h.get("devices") if isinstance(h.get("devices"), list) else []
        mode = h.get("mode") or h.get("schedule") or h.get("how") or ""
        host = h.get("host") or "this host"
        if devices:
            parts.append(
                f"{', '.join(map(str, devices))} shared {host}'s CPU ({mode or 'mode not recorded'})"
            )
        elif h:
            parts.append(", ".join(f"{k} {v}" for k, v in h.items()))
    return "; ".join(parts)


def disagreement_answers(report: RunReport) -> list[tuple[Disagreement, str, list[tuple[str, str]]]]:
    """Each disagreement (flips first) with its reference and every device's answer (or error)."""
    by_id = {s.id: s for s in report.samples}
    out = []
    for x in report.disagreements.samples:
        s = by_id.get(x.id)
        cells = s.cells.items() if s is not None else ()
        answers = [
            (n, c.output if c.status == "ok" else f"[{c.status}] {(c.error.splitlines() or [''])[0]}")
            for n, c in cells
        ]
        out.append((x, s.reference if s is not None else "", answers))
    return out
