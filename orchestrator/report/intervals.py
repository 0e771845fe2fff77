"""A device's 95% intervals and the settings its figures depend on (pure; stats.py does the maths).

Pass rates get a Wilson interval. Latency and speed percentiles and energy get a percentile
bootstrap over the samples; under --repeat the bootstrap draws whole samples (the first run and
its repeats together), since the repeats of one prompt are not independent evidence about the
device (docs/run-directory.md, "Intervals")."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from android_runner.contract import SampleResult

from ..catalogue import BOOTSTRAPPED, MEASURE
from ..farm.run_json import RunJson
from ..stats import Resamples, bootstrap_ci, bootstrap_ci_groups, percentile_stat, wilson_interval


def _pct(ci: tuple[float, float] | None) -> tuple[float, float] | None:
    return None if ci is None else (round(100.0 * ci[0], 1), round(100.0 * ci[1], 1))


def _round(ci: tuple[float, float] | None) -> tuple[float, float] | None:
    return None if ci is None else (round(ci[0], 3), round(ci[1], 3))


def device_intervals(
    results: Sequence[SampleResult],
    repeats: Sequence[SampleResult],
    summary: Any,
    strict: tuple[int, int],
    draws: Resamples | None = None,
) -> dict[str, tuple[float, float]]:
    """DeviceRow field -> (lo, hi) for every figure that has a sample of values. `draws`: the
    bootstrap's resamples, shared with the report's other devices (else drawn here, once for all
    this device's figures)."""
    out: dict[str, tuple[float, float] | None] = {}
    if summary is not None and summary.total_passed is not None and summary.total_scored:
        out["pass_rate_pct"] = _pct(wilson_interval(summary.total_passed, summary.total_scored))
    if strict[0]:
        out["strict_pass_rate_pct"] = _pct(wilson_interval(strict[1], strict[0]))
    ok = [r for r in results if r.status == "ok"]
    extra = [r for r in repeats if r.status == "ok"]
    draws = draws or Resamples()  # drawn once: every figure over as many samples resamples the same ones
    for f in BOOTSTRAPPED:  # catalogue.FIGURES
        name, figure, stat = f.field, MEASURE[f.measure].value, percentile_stat(f.q)
        if extra:  # whole samples with their repeats
            groups: dict[str, list[float]] = {}
            for r in ok + extra:
                v = figure(r)
                if v is not None:
                    groups.setdefault(r.id, []).append(float(v))
            out[name] = _round(bootstrap_ci_groups(list(groups.values()), stat, draws=draws))
        else:
            out[name] = _round(
                bootstrap_ci([v for r in ok if (v := figure(r)) is not None], stat, draws=draws)
            )
    return {k: v for k, v in out.items() if v is not None}


def _one(values: Sequence[Any]) -> Any:
    """The value every row has; several: the commonest (a mixed device says so in its text form)."""
    seen = Counter(v for v in values if v not in (None, ""))
    return seen.most_common(1)[0][0] if seen else None


def row_settings(results: Sequence[SampleResult]) -> dict[str, Any]:
    """The settings the rows carry (issue 22's row fields; absent on rows of older runners)."""
    return {
        "max_output_tokens": _one([getattr(r, "max_output_tokens", None) for r in results]),
        "backend_requested": _one([getattr(r, "backend_requested", "") for r in results]) or "",
        "runner_kind": _one([getattr(r, "runner", "") for r in results]) or "",
        "peak_method": _one([getattr(r, "peak_method", "") for r in results]) or "",
        "mem_sample_ms": _one([getattr(r, "mem_sample_ms", None) for r in results]),
        "threads": str(_one([getattr(r, "threads", None) for r in results]) or ""),
    }


def run_settings(run: RunJson) -> dict[str, Any]:
    """The run's flags every device shares: threads, the token cap asked, --repeat, quantization."""
    threads = run.flag("threads")
    repeat = run.flag("repeat")
    return {
        "threads": str(threads) if threads else "default",
        "repeat": repeat if isinstance(repeat, int) and repeat > 0 else 1,
        "quantization": run.model.quantization,
        "max_output_tokens": run.flag("max_output_tokens"),
        "backend_requested": str(run.flag("backend") or ""),
    }
