"""`edgefarm report --merge RUN...`: runs made by several controllers -> one combined report (pure).

A multi-host farm may be driven by one controller per site; each writes its own run folder. Runs
merge only when they evaluated the same thing: the same model (sha256) and the same dataset with
the same sample selection (dataset sha256 and sample ids). Their device rows are put side by side
(a device name seen in two runs gets its controller's host name, then the run id, appended), the
per-sample cells are joined by sample id, and the disagreement analysis runs over all devices.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..errors import ConfigError
from ..farm.run_json import RunJson
from ..telemetry.conditions import merged as merged_conditions
from .combine import build_report
from .facts import run_conditions
from .settings import require_same
from .types.run_report import RunReport
from .types.sample_row import SampleRow


def _identity(report: RunReport) -> tuple[str, str, tuple[str, ...]]:
    run = report.run
    model = run.get("model") if isinstance(run.get("model"), Mapping) else {}
    dataset = run.get("dataset") if isinstance(run.get("dataset"), Mapping) else {}
    ids = tuple(str(i) for i in dataset.get("sample_ids") or ())
    return str(model.get("sha256", "")), str(dataset.get("sha256", "")), ids


def check_mergeable(reports: Sequence[RunReport]) -> None:
    """Same model, same dataset, same sample selection; else a ConfigError naming the odd run."""
    if len(reports) < 2:
        raise ConfigError("--merge needs at least two run folders", where="--merge",
                          fix="pass every controller's run folder: edgefarm report --merge RUN_A RUN_B ...")  # fmt: skip
    model, dataset, ids = _identity(reports[0])
    for r in reports[1:]:
        m, d, i = _identity(r)
        what = "model (sha256)" if m != model else "dataset (sha256)" if d != dataset else \
            "sample selection" if i != ids else ""  # fmt: skip
        if what or not model:
            raise ConfigError(
                f"run {r.run_id} evaluated another {what or 'model'} than run {reports[0].run_id}",
                where=f"run {r.run_id}",
                fix="merge only runs of the same model file on the same dataset and selection "
                "(the same --model, --dataset, --limit/--per-modality/--modality flags)",
            )


def _host(report: RunReport) -> str:
    host = report.run.get("host") if isinstance(report.run.get("host"), Mapping) else {}
    return str(host.get("hostname") or report.run_id)


def merge_reports(reports: Sequence[RunReport], allow_different: bool = False) -> RunReport:
    diffs = require_same(reports, "edgefarm report --merge", allow_different) if len(reports) > 1 else []
    check_mergeable(reports)  # even with --allow-different: one model, one dataset, one selection
    seen: dict[str, int] = {}
    for r in reports:
        for d in r.devices:
            seen[d.device] = seen.get(d.device, 0) + 1
    taken: set[str] = set()
    rows, renames = [], []
    for r in reports:
        rename: dict[str, str] = {}
        for d in r.devices:
            name = d.device if seen[d.device] == 1 else f"{d.device}@{_host(r)}"
            if name in taken:
                name = f"{d.device}@{r.run_id}"
            taken.add(name)
            rename[d.device] = name
            rows.append(replace(d, device=name, folder=f"{r.run_id}/{d.folder}" if d.folder else ""))
        renames.append(rename)
    order: list[str] = []
    merged: dict[str, SampleRow] = {}
    for r, rename in zip(reports, renames, strict=True):
        for s in r.samples:
            cells = {rename.get(k, k): c for k, c in s.cells.items()}
            if s.id not in merged:
                order.append(s.id)
                merged[s.id] = replace(s, cells=cells)
            else:
                prev = merged[s.id]
                merged[s.id] = replace(prev, cells={**prev.cells, **cells},
                                       modality=prev.modality or s.modality, task=prev.task or s.task,
                                       reference=prev.reference or s.reference)  # fmt: skip
    first = reports[0]
    run: dict[str, Any] = dict(first.run)
    run["run_id"] = "merged-" + "+".join(r.run_id for r in reports)
    run["merged_from"] = [{"run_id": r.run_id, "host": _host(r), "devices": [renames[i][d.device] for d in r.devices],
                           "started_at": r.stamp.started_at, "finished_at": r.stamp.finished_at,
                           "flags": dict(r.stamp.flags)} for i, r in enumerate(reports)]  # fmt: skip
    run["devices"] = [row.device for row in rows]
    run["flags"] = {
        k: v for k, v in first.stamp.flags.items() if all(r.stamp.flags.get(k) == v for r in reports)
    }
    hosts = ", ".join(dict.fromkeys(_host(r) for r in reports))
    run["host"] = {"hostname": f"{len(reports)} controllers: {hosts}"}
    conditions = merged_conditions([(run_conditions(r), renames[i]) for i, r in enumerate(reports)])
    run["conditions"] = None if conditions is None else conditions.to_dict()  # each controller's, per device
    starts = [str(r.run.get("started_at", "")) for r in reports if r.run.get("started_at")]
    run["started_at"] = min(starts) if starts else ""
    finished = max((r.stamp.finished_at for r in reports if r.stamp.finished_at), default="")
    notes = [f"merged from {len(reports)} runs: " + ", ".join(f"{r.run_id} ({_host(r)})" for r in reports)]
    notes += [f"DIFFERENT SETTINGS (merged anyway): {d}" for d in diffs]
    notes += [n for r in reports for n in r.notes]
    return build_report(RunJson.from_dict(run), rows, [merged[i] for i in order], [u for r in reports for u in r.unusable], notes,
                        finished_at=finished)  # fmt: skip
