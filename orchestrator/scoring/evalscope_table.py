"""evalscope's result table (Model | Dataset | Metric | Subset | Num | Score) as plain text.

Same grid as evalscope prints (tabulate "grid": `+---+` rules, `+===+` under the header, text
left-aligned, numbers right-aligned); the score is a percentage like evalscope's ("0.7%", "40%").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .record import read_report_json
from .types import ScoreReport

HEADERS = ("Model", "Dataset", "Metric", "Subset", "Num", "Score")
_RIGHT = {"Num", "Score"}


def format_score(score: float) -> str:
    """0.0071 -> '0.7%', 0.4 -> '40%', 1.0 -> '100%' (one decimal, trailing zeros dropped)."""
    return f"{round(score * 100, 1):g}%"


def render_table(model: str, report: ScoreReport | Mapping[str, Any]) -> str:
    """The table of one device's score record and the model's name (a report.json dict is read too)."""
    if isinstance(report, Mapping):
        report = read_report_json(report)
    dataset = report.dataset or report.scorer
    rows = [
        (
            model,
            dataset,
            m.metric,
            m.subset,
            str(m.num),
            (f"{m.score:g}" if m.metric.startswith("count_") else format_score(m.score))  # general_fc counts
            if m.score is not None
            else "failed",
        )
        for m in report.metrics
    ]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(HEADERS)]

    def line(cells: tuple[str, ...]) -> str:
        padded = [c.rjust(w) if h in _RIGHT else c.ljust(w) for c, w, h in zip(cells, widths, HEADERS)]
        return "| " + " | ".join(padded) + " |"

    rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    head_rule = "+" + "+".join("=" * (w + 2) for w in widths) + "+"
    out = [rule, line(HEADERS), head_rule]
    for r in rows:
        out += [line(r), rule]
    if not rows:
        out.append(rule)
    return "\n".join(out)
