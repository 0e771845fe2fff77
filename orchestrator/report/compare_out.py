"""`edgefarm compare`'s record as JSON, Markdown or CSV (pure), and what it found for a CI gate.

A gate reads `found(c, "regression")`: a device whose verdicts flipped significantly for the worse
(exact McNemar) or whose figure moved significantly the wrong way (paired interval clear of 1 and
past the noise threshold, report/paired.py); "any": a significant change either way."""

from __future__ import annotations

import csv
import io
import json

from ..stats import ALPHA
from .compare import Comparison, DeviceDelta, comparison_lines
from .paired import PAIRED_FIGURES

FAIL_ON = ("none", "regression", "any")
# a between-run ratio of a time or a speed is the change AND the machine's drift between the runs
DRIFT_NOTE = (
    "What two runs can tell: verdict flips (exact McNemar) and each figure's ratio B/A paired on the same "
    "samples, its interval over the samples of these two runs. What they cannot: the spread between runs. "
    "Load, temperature, other jobs and a phone's state move between runs and are in no interval here, so a "
    "speed or latency ratio includes that drift (an identical re-run can differ significantly), and two runs "
    "cannot measure it. Treat a speed change as real only when it repeats: measure A and B interleaved in "
    "one session with `edgefarm ab` (the drift cancels), or judge it against earlier runs with `edgefarm "
    "history`."
)


def _worse(d: DeviceDelta) -> list[str]:
    """The significant changes for the worse: `verdicts` and the figures' labels."""
    p = d.paired
    out = ["verdicts"] if p.p_value < ALPHA and p.a_only > p.b_only else []
    return out + [f.label for f in p.figures if f.significant and (f.ratio > 1) != f.higher_is_better]


def _changed(d: DeviceDelta) -> list[str]:
    p = d.paired
    out = ["verdicts"] if p.p_value < ALPHA and p.a_only != p.b_only else []
    return out + [f.label for f in p.figures if f.significant]


def found(c: Comparison, fail_on: str) -> list[str]:
    """`device: what` for each significant change the gate `fail_on` counts ([]: the gate passes)."""
    if fail_on == "none":
        return []
    pick = _worse if fail_on == "regression" else _changed
    return [f"{d.device}: {', '.join(w)}" for d in c.devices if (w := pick(d))]


def to_json(c: Comparison, note: str = DRIFT_NOTE, interval: str = "95% interval") -> str:
    """Every device's pass rates, flips (with their ids and McNemar p) and paired ratios with intervals;
    `note`: what the speed ratios include (compare: the drift between runs; ab: its rounds). A
    comparison's printers take (c, note, interval); the ratios here carry their bounds, not `interval`."""
    devices = []
    for d in c.devices:
        p = d.paired
        devices.append({
            "device": d.device, "common": d.common, "pass_a": d.pass_a, "pass_b": d.pass_b,
            "pass_to_fail": list(d.to_fail), "fail_to_pass": list(d.to_pass), "mcnemar_p": p.p_value,
            "worse": _worse(d), "changed": _changed(d),
            "figures": {f.field: {"label": f.label, "ratio": f.ratio, "lo": f.lo, "hi": f.hi, "pairs": f.pairs,
                                  "significant": f.significant, "higher_is_better": f.higher_is_better}
                        for f in p.figures},
        })  # fmt: skip
    data = {"run_a": c.run_a, "run_b": c.run_b, "common_samples": c.common_samples, "same": list(c.settings),
            "differences": list(c.differences), "only_a": list(c.only_a), "only_b": list(c.only_b),
            "not_compared": list(c.no_common), "versions_differ": list(c.versions), "conditions": list(c.conditions),
            "devices": devices,
            "drift_note": note}  # fmt: skip
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


def columns(c: Comparison) -> list[tuple[str, str]]:
    """(field, label) of each paired figure (catalogue.PAIRED) some device of the comparison has."""
    return [(f, label) for f, label, _ in PAIRED_FIGURES if any(d.paired.figure(f) for d in c.devices)]


def to_markdown(c: Comparison, note: str = DRIFT_NOTE, interval: str = "95% interval") -> str:
    """The table as Markdown under a title and the settings, the flips (comparison_lines) under it;
    `note` as to_json's; `interval`: what the ratios' brackets are (ab: 99% each)."""
    cols = columns(c)
    lines = comparison_lines(c)
    said = f"B against A on {c.common_samples} common sample(s), ratios B/A ({interval})."
    out = [f"# {c.run_a} → {c.run_b}", "", said, ""]
    if c.settings:
        out += ["Same in both runs: " + "; ".join(c.settings), ""]
    if c.differences:
        out += ["**DIFFERENT SETTINGS (compared anyway):** " + "; ".join(c.differences), ""]
    if c.versions:
        out += ["**Versions differ:** " + "; ".join(c.versions), ""]
    if c.conditions:
        out += ["**Conditions:** " + "; ".join(c.conditions), ""]
    head = ["Device", "Samples", "Pass (%)"] + [label for _, label in cols]
    out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for d in c.devices:
        cells = [d.device, str(d.common), d.pass_text()] + [d.figure_text(f) for f, _ in cols]
        out.append("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
    out += [""] + [f"- {x}" for x in lines] + ([""] if lines else []) + [note, ""]
    return "\n".join(out)


CSV_FIELDS = ("run_a", "run_b", "device", "common", "pass_a", "pass_b", "pass_to_fail", "fail_to_pass", "mcnemar_p",
              "figure", "ratio", "lo", "hi", "pairs", "significant", "worse")  # fmt: skip


def to_csv(c: Comparison, note: str = "", interval: str = "") -> str:
    """One row per device and figure (and one for the verdicts), for a spreadsheet or pandas (the
    columns carry each ratio's bounds; `note` and `interval` are for the table printers)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, lineterminator="\n")
    w.writeheader()
    for d in c.devices:
        p = d.paired
        base = {"run_a": c.run_a, "run_b": c.run_b, "device": d.device, "common": d.common, "pass_a": d.pass_a,
                "pass_b": d.pass_b, "pass_to_fail": len(d.to_fail), "fail_to_pass": len(d.to_pass),
                "mcnemar_p": p.p_value}  # fmt: skip
        worse = _worse(d)
        w.writerow(
            base | {"figure": "verdicts", "significant": p.p_value < ALPHA, "worse": "verdicts" in worse}
        )
        for f in p.figures:
            w.writerow(base | {"figure": f.field, "ratio": f.ratio, "lo": f.lo, "hi": f.hi, "pairs": f.pairs,
                               "significant": f.significant, "worse": f.label in worse})  # fmt: skip
    return buf.getvalue()
