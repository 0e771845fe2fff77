"""`edgefarm history` printed: json (every field), csv (one row per device, run and figure), md (a
table per device and configuration, the stability beside each figure, the changes after). Pure."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from ..catalogue import HISTORY_TABLE, figures
from .types import Series, figure_spec, shows_change

JSON_SCHEMA = 1


def _plain(series: Series) -> dict[str, Any]:
    data = asdict(series)
    data["rolling_sd"] = {k: list(v) for k, v in series.rolling_sd.items()}
    return data


def to_json(series: Sequence[Series]) -> str:
    return json.dumps({"schema_version": JSON_SCHEMA, "series": [_plain(s) for s in series]},
                      ensure_ascii=False, indent=1) + "\n"  # fmt: skip


CSV_COLUMNS = ("device", "hardware", "config_key", "run_id", "started_at", "runtime_version", "model_sha256",
               "backend", "figure", "value", "lo", "hi", "rolling_sd", "change")  # fmt: skip


def to_csv(series: Sequence[Series]) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for s in series:
        for i, p in enumerate(s.points):
            for name, f in p.figures.items():
                change = "; ".join(
                    c.detail for c in s.changes if c.run_id == p.run_id and shows_change(c.field, name)
                )
                sd = s.rolling_sd.get(name, ())[i] if name in s.rolling_sd else None
                w.writerow([s.device, s.hardware, s.config_key, p.run_id, p.started_at, p.runtime_version,
                            p.model_sha256, p.backend, name, f.value, f.lo, f.hi, sd, change])  # fmt: skip
    return out.getvalue()


# the figures the markdown table shows (the rest are in json and csv)
MD_FIGURES = tuple(f.field for f in figures(HISTORY_TABLE))


def config_text(config: Any) -> str:
    keys = ("model", "backend", "threads", "runner", "max_output_tokens", "shape", "repeat")
    return ", ".join(f"{k} {config[k]}" for k in keys if config.get(k) not in (None, ""))


def to_md(series: Sequence[Series]) -> str:
    if not series:
        return "No runs in the history match.\n"
    lines = ["# History", ""]
    for s in series:
        shown = [f for f in MD_FIGURES if any(f in p.figures for p in s.points)]
        lines += [f"## {s.device} ({s.hardware or 'unknown hardware'}): {config_text(s.config)}", ""]
        header = ["Run", "Started", "Runtime"] + [figure_spec(f).column.header for f in shown]
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for p in s.points:
            cells = [p.run_id, p.started_at, p.runtime_version or p.runtime_sha256[:12] or "?"]
            for f in shown:
                fig = p.figures.get(f)
                col = figure_spec(f).column
                text = (
                    col.render_ci(fig.value, (fig.lo, fig.hi) if fig.lo is not None else None) if fig else "–"
                )
                if any(c.run_id == p.run_id and shows_change(c.field, f) for c in s.changes):
                    text = f"**{text}** ⚠"
                cells.append(text)
            lines.append("| " + " | ".join(cells) + " |")
        stab = [x for x in s.stability if x.figure in shown]
        if stab:
            lines += ["", "Stability over the last runs: " + "; ".join(
                f"{figure_spec(x.figure).column.label} CV {_num(x.cv_pct, '{:.1f}%')}, p99/p50 {_num(x.p99_p50)}, "
                f"sd {_num(x.rolling_sd)} ({x.runs} runs)" for x in stab)]  # fmt: skip
        if s.changes:
            lines += ["", "Significant changes against the last comparable run:"]
            lines += [f"- {c.text()}" for c in s.changes]
        lines.append("")
    return "\n".join(lines)


def _num(v: float | None, fmt: str = "{:.3g}") -> str:
    return "–" if v is None else fmt.format(v)
