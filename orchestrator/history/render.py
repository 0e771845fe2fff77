"""`edgefarm history` printed: json (every field), csv (one row per device, run and figure), md (a
table per device and configuration, each figure's mark, how many runs it was judged against, the
stability and the changes after). The marks and their legend are defined here once for md, the
terminal (history/term.py) and html. Pure."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from ..catalogue import HISTORY_TABLE, figures
from .judge import CHANGE, EXCLUDED, FOLLOWS, MIN_RUNS, OUTLIER
from .types import Judgement, Point, Series, Stability, figure_spec, number

JSON_SCHEMA = (
    2  # 2: judgements per figure and point; changes against the earlier runs' band (history/judge.py)
)

# state (and, for a change, its direction) -> the mark beside a figure, and what it means
MARKS: dict[str, tuple[str, str]] = {
    "worse": ("⚠", "worse: outside the usual spread of the comparable runs before it (a change)"),
    "better": ("✓", "better: outside the usual spread of the comparable runs before it (a change)"),
    OUTLIER: ("○", "outlier: outside the usual spread, and the next run came back (not a change)"),
    EXCLUDED: ("✗", "excluded (`history exclude`): not judged, not judged against"),
}
FEW_TEXT = "not enough runs to judge"
NOTE = (
    "Each figure is the run's own (a median over its samples where it has one) with its 95% interval over "
    "those samples in parentheses; a mark judges the run against the spread between the comparable runs "
    "before it (docs/history.md):"
)


def mark_key(j: Judgement | None) -> str:
    """MARKS' key for a judgement, '' for no mark."""
    if j is None:
        return ""
    if j.state == CHANGE:
        return "worse" if j.worse else "better"
    return j.state if j.state in MARKS else ""


def legend(used: set[str]) -> list[str]:
    """The meaning of each mark in `used`, in MARKS' order."""
    return [f"{MARKS[k][0]} {MARKS[k][1]}" for k in MARKS if k in used]


def judged_on(s: Series, i: int) -> str:
    """How many earlier runs point i's figures were judged against (the most over its figures), or why none."""
    js = [j[i] for j in s.judgements.values() if j[i] is not None]
    if ex := next((j for j in js if j.state == EXCLUDED), None):
        return f"excluded: {ex.note}"
    runs = min((j.runs for j in js), default=0)
    if follows := next((j for j in js if j.state == FOLLOWS), None):
        return f"new level since {follows.note}"
    if runs < MIN_RUNS:
        return f"{FEW_TEXT} ({runs} of {MIN_RUNS})"
    return f"{runs} runs"


def condition_tags(p: Point) -> str:
    """What was bad during the run, by rule name (`LOADED`, `HOT`: telemetry/conditions.py), or ''."""
    return ", ".join(sorted({c.split(":")[0] for c in p.conditions}))


CONDITIONS_NOTE = (
    "Conditions: what was bad during the run (docs/conditions.md): LOADED, the host busy with other "
    "work; HOT, THROTTLED, BUSY, a device at its start; its report says how much."
)


def header(figure: str) -> str:
    return figure_spec(figure).column.header


def stability_text(x: Stability) -> str:
    col = figure_spec(x.figure).column
    unit = f" {col.unit}" if col.unit else ""
    cv = "–" if x.cv_pct is None else f"{x.cv_pct:.1f}%"
    tail = "–" if x.p99_p50 is None else f"{x.p99_p50:.2f}"
    return f"{col.label}: CV {cv}, p99/p50 {tail}, sd {number(x.rolling_sd)}{unit if x.rolling_sd is not None else ''}"


def _plain(series: Series) -> dict[str, Any]:
    data = asdict(series)
    data["rolling_sd"] = {k: list(v) for k, v in series.rolling_sd.items()}
    data["judgements"] = {
        k: [None if j is None else asdict(j) for j in v] for k, v in series.judgements.items()
    }
    return data


def to_json(series: Sequence[Series]) -> str:
    return json.dumps({"schema_version": JSON_SCHEMA, "series": [_plain(s) for s in series]},
                      ensure_ascii=False, indent=1) + "\n"  # fmt: skip


CSV_COLUMNS = ("device", "hardware", "config_key", "run_id", "started_at", "runtime_version", "model_sha256",
               "backend", "figure", "value", "lo", "hi", "rolling_sd", "judged", "judged_runs", "band_lo",
               "band_hi", "change")  # fmt: skip


def to_csv(series: Sequence[Series]) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for s in series:
        for i, p in enumerate(s.points):
            for name, f in p.figures.items():
                change = "; ".join(c.text() for c in s.changes if c.run_id == p.run_id and c.figure == name)
                sd = s.rolling_sd.get(name, ())[i] if name in s.rolling_sd else None
                j = s.judgements[name][i] if name in s.judgements else None
                w.writerow([s.device, s.hardware, s.config_key, p.run_id, p.started_at, p.runtime_version,
                            p.model_sha256, p.backend, name, f.value, f.lo, f.hi, sd, j.state if j else "",
                            j.runs if j else "", j.lo if j else "", j.hi if j else "", change])  # fmt: skip
    return out.getvalue()


# the figures the tables show (catalogue HISTORY_TABLE; the rest are in json and csv)
# the figures the markdown table shows (the rest are in json and csv)
MD_FIGURES = tuple(f.field for f in figures(HISTORY_TABLE))


def config_text(config: Any) -> str:
    keys = ("model", "backend", "threads", "runner", "max_output_tokens", "shape", "repeat")
    return ", ".join(f"{k} {config[k]}" for k in keys if config.get(k) not in (None, ""))


def shown_figures(s: Series) -> list[str]:
    return [f for f in MD_FIGURES if any(f in p.figures for p in s.points)]


def cell(s: Series, i: int, figure: str, interval: bool = True) -> tuple[str, str]:
    """(the figure's text, with its interval if asked, and its MARKS key) of point i."""
    p: Point = s.points[i]
    fig = p.figures.get(figure)
    if fig is None or fig.value is None:
        return "–", ""
    text = number(fig.value)
    if interval and fig.lo is not None and fig.hi is not None:
        text += f" ({number(fig.lo)}–{number(fig.hi)})"
    js = s.judgements.get(figure)
    return text, mark_key(js[i] if js else None)


def started(p: Point) -> str:
    return p.started_at[:19].replace("T", " ")


def to_md(series: Sequence[Series]) -> str:
    if not series:
        return "No runs in the history match.\n"
    lines = ["# History", ""]
    for s in series:
        shown = shown_figures(s)
        lines += [f"## {s.device} ({s.hardware or 'unknown hardware'}): {config_text(s.config)}", ""]
        conditions = any(p.conditions for p in s.points)
        head = (
            ["Run", "Started", "Runtime"]
            + (["Conditions"] if conditions else [])
            + [header(f) for f in shown]
        )
        head += ["Judged against"]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        used: set[str] = set()
        for i, p in enumerate(s.points):
            cells = [p.run_id, started(p), p.runtime_version or p.runtime_sha256[:12] or "?"]
            cells += [condition_tags(p) or "–"] if conditions else []
            for f in shown:
                text, key = cell(s, i, f)
                used.add(key)
                cells.append(f"**{text}** {MARKS[key][0]}" if key in ("worse", "better") else
                             f"{text} {MARKS[key][0]}" if key else text)  # fmt: skip
            cells.append(judged_on(s, i))
            lines.append("| " + " | ".join(cells) + " |")
        lines += ["", NOTE]
        lines += [f"- {x}" for x in legend(used)] + ([f"- {CONDITIONS_NOTE}"] if conditions else [])
        stab = [x for x in s.stability if x.figure in shown]
        if stab:
            lines += ["", f"Stability over the last {max(x.runs for x in stab)} runs: "
                      + "; ".join(stability_text(x) for x in stab)]  # fmt: skip
        if s.changes:
            lines += ["", "Changes (against the spread between the comparable runs before each):"]
            lines += [f"- {c.text()}" for c in s.changes]
        lines.append("")
    return "\n".join(lines)
