"""Per-device results + scores -> the combined RunReport (pure)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from android_runner.contract import SampleResult

from .types import DeviceRow, RunReport, SampleCell, SampleRow

SCHEMA_VERSION = 1


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (numpy's default), q in [0, 100]; None for no values."""
    xs = sorted(v for v in values if v is not None and not math.isnan(v))
    if not xs:
        return None
    pos = (len(xs) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return round(xs[lo] + (xs[hi] - xs[lo]) * (pos - lo), 3)


def _max(values: Sequence[float | None]) -> float | None:
    xs = [v for v in values if v is not None]
    return max(xs) if xs else None


def device_row(
    device: Mapping[str, Any],
    outcome: Mapping[str, Any],
    results: Sequence[SampleResult],
    report: Mapping[str, Any] | None,
) -> DeviceRow:
    ok = [r for r in results if r.status == "ok"]
    summary = (report or {}).get("summary", {})
    metric_rows = [m for m in (report or {}).get("metrics", []) if "metric" in m]
    several = len({m.get("subset") for m in metric_rows}) > 1
    metrics = {(f"{m['metric']}/{m['subset']}" if several else m["metric"]): m["score"] for m in metric_rows}
    backends = sorted({r.backend for r in results if r.backend})
    return DeviceRow(
        device=device.get("name", outcome.get("name", "?")),
        kind=device.get("kind", outcome.get("kind", "")),
        hardware=" ".join(x for x in (device.get("manufacturer", ""), device.get("model", "")) if x)
        if device.get("kind") != "local"
        else device.get("cpu", ""),
        soc=device.get("soc", ""),
        backend=",".join(backends) or outcome.get("backend", ""),
        samples=len(results),
        scored=int(summary.get("total_scored", 0) or 0),
        passed=int(summary.get("total_passed", 0) or 0),
        pass_rate_pct=summary.get("pass_rate_pct"),
        verdict=summary.get("verdict", ""),
        init_ms=_max([r.init_ms for r in results]),
        ttft_ms_p50=percentile([r.ttft_ms for r in ok if r.ttft_ms is not None], 50),
        ttft_ms_p90=percentile([r.ttft_ms for r in ok if r.ttft_ms is not None], 90),
        prefill_tps_p50=percentile([r.prefill_tps for r in ok if r.prefill_tps], 50),
        decode_tps_p50=percentile([r.decode_tps for r in ok if r.decode_tps], 50),
        peak_rss_mb=_max([max(filter(None, (r.peak_rss_mb, r.peak_hwm_mb)), default=None) for r in results]),
        peak_anon_mb=_max([r.peak_anon_mb for r in results]),
        wall_s=round(outcome["wall_s"], 2) if outcome.get("wall_s") is not None else None,
        status_counts=dict(sorted(Counter(r.status for r in results).items())),
        by_modality=dict((report or {}).get("by_modality", {})),
        metrics=metrics,
        model_bytes_pushed=int(outcome.get("model_push", {}).get("bytes_sent", 0)),
        error=outcome.get("error", ""),
    )


def sample_rows(
    per_device: Mapping[str, tuple[Sequence[SampleResult], Mapping[str, Any] | None]],
    max_output_chars: int = 200,
) -> tuple[SampleRow, ...]:
    """Every sample with one cell per device, in first-seen order."""
    order: list[str] = []
    meta: dict[str, tuple[str, str]] = {}
    cells: dict[str, dict[str, SampleCell]] = {}
    for device, (results, report) in per_device.items():
        scored = {s.get("test_id", s.get("id")): s for s in (report or {}).get("samples", [])}
        for r in results:
            if r.id not in cells:
                order.append(r.id)
                cells[r.id] = {}
            s = scored.get(r.id, {})
            if r.id not in meta or not meta[r.id][0]:
                meta[r.id] = (s.get("modality", ""), s.get("task", ""))
            cells[r.id][device] = SampleCell(
                status=r.status,
                passed=s.get("passed"),
                score=s.get("score"),
                ttft_ms=r.ttft_ms,
                decode_tps=r.decode_tps,
                output=(r.output if r.status == "ok" else r.error)[:max_output_chars],
            )
    return tuple(SampleRow(i, meta.get(i, ("", ""))[0], meta.get(i, ("", ""))[1], cells[i]) for i in order)


def build_report(
    run: Mapping[str, Any],
    rows: Sequence[DeviceRow],
    samples: Sequence[SampleRow] = (),
    unusable: Sequence[Mapping[str, Any]] = (),
    notes: Sequence[str] = (),
) -> RunReport:
    return RunReport(
        schema_version=SCHEMA_VERSION,
        run_id=run.get("run_id", ""),
        run=dict(run),
        devices=tuple(rows),
        samples=tuple(samples),
        unusable=tuple(unusable),
        notes=tuple(notes),
    )
