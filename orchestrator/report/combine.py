"""Per-device results + score records -> the combined RunReport (pure)."""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from itertools import combinations
from typing import TYPE_CHECKING, Any

from android_runner.contract import SampleResult

from ..catalogue import FIGURES, MEASURE, MEASURES, PERCENTILES, Figure
from ..devices.kinds import kind_spec
from ..devices.types import DeviceInfo
from ..devices.units import split_unit
from ..farm.run_json import RunJson
from ..farm.types import DeviceOutcome
from ..stats import Resamples, quantile
from ..telemetry.energy import mean_current_ma
from .fidelity import fidelity_report
from .intervals import device_intervals, row_settings, run_settings
from .matrix import backend_matrix
from .paired import against_baseline
from .types.device_row import DeviceRow
from .types.disagreements import Disagreement, Disagreements, PairAgreement
from .types.run_report import RunReport, RunStamp
from .types.sample_row import SampleCell, SampleRow

if TYPE_CHECKING:
    from ..scoring.types import ScoreReport

SCHEMA_VERSION = 3  # 3: intervals, strict check, settings, baseline and paired comparisons
MAX_OUTPUT_CHARS = 1000  # per cell in the combined report; the device folder keeps every character


def percentile(values: Sequence[float], q: float) -> float | None:
    """stats.quantile of the values (None and NaN left out), q in [0, 100], rounded to 3 places; None
    for no values."""
    p = quantile([v for v in values if v is not None and not math.isnan(v)], q / 100.0)
    return None if p is None else round(p, 3)


def _max(values: Sequence[float | None]) -> float | None:
    xs = [v for v in values if v is not None]
    return max(xs) if xs else None


def as_record(report: Any) -> ScoreReport | None:
    """A device's score record; a report.json dict (either layout) is read into one."""
    if report is None or not isinstance(report, Mapping):
        return report
    from ..scoring.record import read_report_json  # lazy: the scoring package imports nltk

    return read_report_json(report)


def thermal_c(reading: Mapping[str, Any] | None) -> float | None:
    """The hottest temperature of a thermal reading (boards: max_temp_c; phones: battery_temp_c)."""
    if not isinstance(reading, Mapping):
        return None
    for key in ("max_temp_c", "battery_temp_c", "temp_c"):
        v = reading.get(key)
        if isinstance(v, (int, float)):
            return float(v)
    return None


def thermal_status(reading: Mapping[str, Any] | None) -> int | None:
    """The OS's thermal status in a thermal reading (Android's thermal service level), None without one."""
    v = reading.get("thermal_status") if isinstance(reading, Mapping) else None
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def device_row(
    device: DeviceInfo,
    outcome: DeviceOutcome,
    results: Sequence[SampleResult],
    report: Any,
    repeats: Sequence[SampleResult] = (),
    figures_over: str = "",
    draws: Resamples | None = None,
    expected: int | None = None,
) -> DeviceRow:
    """`repeats` (--repeat): the extra runs, counted in the latency distributions with the first runs.
    `draws`: the intervals' bootstrap resamples, shared by every device of a report (stats.Resamples).
    `expected`: the samples the run selected (run.json); a device with fewer rows is partial."""
    score = as_record(report)
    name = device.name or outcome.name or "?"
    # rows a stand-in board ran for this phone are in its column, not in its figures (the board's)
    results, all_rows = [r for r in results if r.stood_in_for != name], results
    ok = [r for r in results if r.status == "ok"]
    timed = ok + [r for r in repeats if r.status == "ok"]
    sm = score.summary if score is not None else None
    metric_rows = [m for m in (score.metrics if score else ()) if m.score is not None]
    several = len({m.subset for m in metric_rows}) > 1
    metrics = {(f"{m.metric}/{m.subset}" if several else m.metric): m.score for m in metric_rows}
    if (valid := format_valid(score)) is not None:
        metrics["format_valid"] = valid
    backends = sorted({r.backend for r in results if r.backend})
    runner = _runner_identity(outcome.runner)
    strict = [
        s for s in (score.samples if score else ()) if s.status != "skipped" and "strict_passed" in s.detail
    ]
    strict_passed = sum(bool(s.detail["strict_passed"]) for s in strict)
    return DeviceRow(
        device=name,
        kind=device.kind or outcome.kind,
        hardware=" ".join(x for x in (device.manufacturer, device.model) if x)
        if not kind_spec(device.kind or outcome.kind).shares_host_cpu
        else device.cpu,
        soc=device.soc,
        backend=",".join(backends),
        samples=len(all_rows),
        scored=sm.total_scored if sm else 0,
        passed=(sm.total_passed or 0) if sm else 0,
        pass_rate_pct=sm.pass_rate_pct if sm else None,
        verdict=sm.verdict if sm else "",
        init_ms=_max([r.init_ms for r in results]),
        partial=_partial(outcome, all_rows, name, expected),
        peak_anon_mb=_max([r.peak_anon_mb for r in results]),
        wall_s=round(outcome.wall_s, 2) if outcome.wall_s is not None else None,
        peak_file_mb=_max([r.peak_file_mb for r in results]),
        thermal_max_c=_max([thermal_c(r.thermal_after) or thermal_c(r.thermal_before) for r in results]),
        scoring_errors=sm.scoring_errors if sm else 0,
        skipped=len(sm.skipped) if sm else 0,
        runner=runner["runner"],
        runner_sha256=runner["runner_sha256"],
        runtime=runner["runtime"],
        model_loads=outcome.model_loads,
        status_counts=dict(sorted(Counter(r.status for r in results).items())),
        by_modality={
            m.modality: {"passed": m.passed, "total": m.total, "avg_score": m.avg_score}
            for m in (score.by_modality if score else ())
        },
        metrics=metrics,
        model_bytes_pushed=outcome.model_push.bytes_sent,
        error=outcome.error,
        scoring_problem=_scoring_problem(score),
        stand_in=_stand_in(outcome.stand_in, all_rows, name),
        shards=_shards(device.extra),
        figures_over=figures_over,
        intervals=device_intervals(results, repeats, sm, (len(strict), strict_passed), draws),
        strict_scored=len(strict),
        strict_passed=strict_passed,
        strict_pass_rate_pct=round(100.0 * strict_passed / len(strict), 1) if strict else None,
        card_only=tuple(s.id for s in strict if s.passed and not s.detail["strict_passed"]),
        **row_settings(results),
        **{f.field: percentile(_values(f, timed), f.q) for f in PERCENTILES},  # catalogue.FIGURES
        **{f.field: _max(_values(f, results)) for f in FIGURES if f.measure and f.stat == "max"},
    )


def format_valid(score: ScoreReport | None) -> float | None:
    """The share of a device's structured-output and tool-call rows whose answer parses (its format is
    valid; a call that parses where one is expected), apart from whether it is right: the backend matrix's
    validity (docs/matrix.md). None when the set has no such row."""
    checked = [s.detail for s in (score.samples if score else ()) if s.metric in ("structured", "tool_call")
               and s.status == "scored" and not s.detail.get("expected_refusal")]  # fmt: skip
    if not checked:
        return None
    ok = sum(1 for d in checked if d.get("format_valid") or d.get("parsed_call") is not None)
    return round(ok / len(checked), 4)


def _partial(outcome: DeviceOutcome, rows: Sequence[SampleResult], name: str, expected: int | None) -> str:
    """`interrupted: 100/200` (Ctrl-C), `failed: 100/200` (the device's session failed part-way) or
    `ran 100/200`; "" when the device has a row for every sample the run selected. Rows a board ran
    for another device (--fallback) are not this device's."""
    ran = sum(1 for r in rows if not r.stood_in_for or r.stood_in_for == name)
    if expected is None:
        return "interrupted" if outcome.interrupted else ""
    if ran >= expected:
        return ""
    how = "interrupted" if outcome.interrupted else "failed" if outcome.error else "ran"
    return f"{how}: {ran}/{expected}"


def _shards(extra: Mapping[str, Any]) -> str:
    """--shard: the group's members, `3 phones: SERIAL (67), ...` (samples each ran; device.json extra)."""
    members = extra.get("shards")
    if not isinstance(members, list) or not members:
        return ""
    listed = ", ".join(
        f"{m.get('serial') or m.get('name')} ({m.get('samples')})" for m in members if isinstance(m, Mapping)
    )
    return f"{len(members)} devices: {listed}"


def _stand_in(s: Mapping[str, Any] | None, rows: Sequence[SampleResult], name: str) -> str:
    """On a phone a board stood in for (outcome.json's `stand_in`): `pi-5 ran 4`; on the board:
    `for pixel-8: 4`."""
    if isinstance(s, Mapping) and s.get("board"):
        return f"{s['board']} ran {sum(1 for r in rows if r.stood_in_for == name)}"
    mine = Counter(r.stood_in_for for r in rows if r.stood_in_for and r.stood_in_for != name)
    return ", ".join(f"for {phone}: {n}" for phone, n in sorted(mine.items()))


def _values(f: Figure, rows: Sequence[SampleResult]) -> list[float]:
    """The figure's measure over the rows (those without a value that counts left out)."""
    measure = MEASURE[f.measure]
    return [v for r in rows if (v := measure.value(r)) is not None]


def _runner_identity(src: Mapping[str, Any]) -> dict[str, str]:
    """outcome.json's `runner` stamp ({runner, runner_sha256, runtime / runtime_lib, runtime_version,
    runtime_sha256}); every value text, '' when unknown."""
    name = src.get("runner")
    runtime_name = src.get("runtime") or (str(src.get("runtime_lib", "")).rsplit("/", 1)[-1])
    runtime = " ".join(
        x
        for x in (
            str(runtime_name or ""),
            str(src.get("runtime_version") or ""),
            f"sha256 {str(src['runtime_sha256'])[:12]}" if src.get("runtime_sha256") else "",
        )
        if x
    )
    return {
        "runner": str(name or ""),
        "runner_sha256": str(src.get("runner_sha256") or ""),
        "runtime": runtime,
    }


def _scoring_problem(score: ScoreReport | None) -> str:
    if score is None:
        return ""
    judge = score.summary.extra.get("judge_error")
    if judge:
        return f"LLM judge failed, Accuracy not scored: {judge}"
    return score.summary.note if score.summary.note.startswith("scoring failed") else ""


def _sha(text: str) -> str:
    return hashlib.sha256(text.strip().encode("utf-8", "replace")).hexdigest()[:16]


def sample_rows(
    per_device: Mapping[str, tuple[Sequence[SampleResult], Any]], max_output_chars: int = MAX_OUTPUT_CHARS
) -> tuple[SampleRow, ...]:
    """Every sample with one cell per device, in first-seen order."""
    order: list[str] = []
    meta: dict[str, tuple[str, str, str]] = {}
    cells: dict[str, dict[str, SampleCell]] = {}
    for device, (results, report) in per_device.items():
        score = as_record(report)
        scored = {s.id: s for s in (score.samples if score else ())}
        for r in results:
            if r.id not in cells:
                order.append(r.id)
                cells[r.id] = {}
            s = scored.get(r.id)
            if s is not None and (r.id not in meta or not meta[r.id][0]):
                meta[r.id] = (s.modality, s.task, s.reference)
            ok = r.status == "ok"
            cells[r.id][device] = SampleCell(
                status=r.status,
                passed=s.passed if s is not None and s.status != "skipped" else None,
                score=s.score if s is not None else None,
                output=(r.output if ok else r.error)[:max_output_chars],
                error="" if ok else r.error[:max_output_chars],
                scoring_error=s.error if s is not None else "",
                peak_anon_mb=r.peak_anon_mb,
                peak_file_mb=r.peak_file_mb,
                thermal_c=thermal_c(r.thermal_after) or thermal_c(r.thermal_before),
                backend=r.backend,
                output_sha=_sha(r.output) if ok else "",
                stood_in=bool(r.stood_in_for),
                ran_on=r.ran_on,
                strict_passed=(
                    s.detail.get("strict_passed") if s is not None and s.status != "skipped" else None
                ),
                runner=getattr(r, "runner", "") or "",
                max_output_tokens=getattr(r, "max_output_tokens", None),
                backend_requested=getattr(r, "backend_requested", "") or "",
                peak_method=getattr(r, "peak_method", "") or "",
                mem_sample_ms=getattr(r, "mem_sample_ms", None),
                fidelity=r.fidelity,
                infer_ms=r.infer_ms,
                cooldown_s=r.cooldown_s,
                battery_ma=mean_current_ma(r),
                thermal_status=thermal_status(r.thermal_after) or thermal_status(r.thermal_before),
                **{m.name: m.cell(r) for m in MEASURES},  # catalogue.MEASURES
            )
    return tuple(
        SampleRow(i, *meta.get(i, ("", "", ""))[:2], cells[i], meta.get(i, ("", "", ""))[2]) for i in order
    )


def disagreements(rows: Sequence[DeviceRow], samples: Sequence[SampleRow]) -> Disagreements:
    """Pairwise agreement, and the samples that pass on one device and fail on another or whose
    answers differ (the runners decode greedily, so equal software should give equal text)."""
    names = [r.device for r in rows]
    backend = {r.device: r.backend or "?" for r in rows}
    hardware = {r.device: r.hardware or r.device for r in rows}
    pairs = []
    for a, b in combinations(names, 2):
        common = same = both_ok = same_out = 0
        for s in samples:
            ca, cb = s.cells.get(a), s.cells.get(b)
            if ca is None or cb is None:
                continue
            if ca.passed is not None and cb.passed is not None:
                common += 1
                same += ca.passed == cb.passed
            if ca.status == "ok" and cb.status == "ok":
                both_ok += 1
                same_out += ca.output_sha == cb.output_sha
        pairs.append(PairAgreement(a, b, common, same, both_ok, same_out))
    found: list[Disagreement] = []
    by_backend: Counter[str] = Counter()
    by_hw: Counter[str] = Counter()
    for s in samples:
        passed = tuple(n for n in names if n in s.cells and s.cells[n].passed is True)
        failed = tuple(n for n in names if n in s.cells and s.cells[n].passed is False)
        outputs = {c.output_sha for c in s.cells.values() if c.status == "ok"}
        if (passed and failed) or len(outputs) > 1:
            found.append(Disagreement(s.id, s.modality, passed, failed, len(outputs)))
        if passed and failed:
            for key, counter in ((backend, by_backend), (hardware, by_hw)):
                ok_groups = {key[n] for n in passed}
                for g in {key[n] for n in failed} - ok_groups:
                    counter[g] += 1
    found.sort(key=lambda x: not (x.passed_on and x.failed_on))  # verdict flips first, then run order
    return Disagreements(
        tuple(pairs), tuple(found), dict(by_backend.most_common()), dict(by_hw.most_common())
    )


def run_stamp(run: RunJson, rows: Sequence[DeviceRow], finished_at: str = "") -> RunStamp:
    model, dataset, host = run.model, run.dataset, run.host
    host_text = " ".join(str(x) for x in (host.get("hostname"), host.get("platform")) if x)
    return RunStamp(
        model_path=model.path,
        model_size_bytes=model.size_bytes,
        model_sha256=model.sha256,
        dataset_path=dataset.path,
        dataset_format=dataset.format,
        dataset_sha256=dataset.sha256,
        samples_run=dataset.samples_run,
        samples_total=dataset.samples_total,
        skipped={r.device: r.skipped for r in rows if r.skipped},
        started_at=run.started_at,
        finished_at=run.finished_at or finished_at,
        host=host_text,
        versions=dict(run.versions),
        backends=tuple(sorted({b for r in rows for b in r.backend.split(",") if b})),
        flags={k: v for k, v in run.flags.items() if v not in (None, [], "")},
    )


def _sharing(value: Any) -> tuple[Mapping[str, Any], ...]:
    """run.json's host_sharing (core's record): one mapping or a list of them."""
    if isinstance(value, Mapping):
        return (value,)
    return tuple(h for h in value or () if isinstance(h, Mapping)) if isinstance(value, list) else ()


def with_run_settings(row: DeviceRow, run: RunJson) -> DeviceRow:
    """The run's flags (threads, --repeat, quantization; the token cap and backend asked when the
    rows do not carry their own) on a device row."""
    settings = run_settings(run)
    if unit_backend := split_unit(row.device)[1]:  # a matrix run's unit asked its own backend, not the list
        settings["backend_requested"] = unit_backend
    return replace(row, **{k: v for k, v in settings.items() if getattr(row, k) in (None, "")})


def build_report(
    run: RunJson,
    rows: Sequence[DeviceRow],
    samples: Sequence[SampleRow] = (),
    unusable: Sequence[Mapping[str, Any]] = (),
    notes: Sequence[str] = (),
    finished_at: str = "",
    baseline: str = "",
) -> RunReport:
    rows = [with_run_settings(r, run) for r in rows]
    names = [r.device for r in rows if r.samples]  # a device that ran nothing is compared with none
    baseline = baseline if baseline in names else (names[0] if names else "")
    reference = str(run.flag("reference") or "")
    report = RunReport(
        schema_version=SCHEMA_VERSION,
        run_id=run.run_id,
        run=run.to_dict(),
        devices=tuple(rows),
        samples=tuple(samples),
        unusable=tuple(unusable),
        notes=tuple(notes),
        stamp=run_stamp(run, rows, finished_at),
        disagreements=disagreements(rows, samples),
        baseline=baseline,
        paired=against_baseline(samples, names, baseline),
        host_sharing=_sharing(run.host_sharing),
        fidelity=fidelity_report(rows, samples, reference if reference in names else ""),
    )
    return replace(report, matrix=backend_matrix(report))  # over the report's own rows and pairs
