"""A device's row of the run report (`DeviceRow`: what it is, how it ran, its catalogue figures with
their intervals) and the wide table's columns (`COLUMNS`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from android_runner.contract import Settle

from ...catalogue import FIGURE, FIGURES, WIDE, Column, figures, with_fields


@dataclass(frozen=True)
@with_fields(f.field for f in FIGURES if f.on_row)  # a new catalogue figure: a field after these
class DeviceRow:
    device: str
    kind: str
    hardware: str  # phone model / CPU
    soc: str
    backend: str
    samples: int
    scored: int
    passed: int
    pass_rate_pct: float | None
    verdict: str
    init_ms: float | None
    ttft_ms_p50: float | None
    ttft_ms_p90: float | None
    prefill_tps_p50: float | None
    decode_tps_p50: float | None
    peak_rss_mb: float | None
    peak_anon_mb: float | None
    wall_s: float | None
    prefill_tps_p90: float | None = None
    decode_tps_p90: float | None = None
    peak_file_mb: float | None = None
    thermal_max_c: float | None = None
    scoring_errors: int = 0
    skipped: int = 0  # samples not scored (unsupported by the model, not run)
    runner: str = ""  # outcome.json: runner name, its sha256, runtime version, engine loads
    runner_sha256: str = ""
    runtime: str = ""
    model_loads: int | None = None
    status_counts: Mapping[str, int] = field(default_factory=dict)
    by_modality: Mapping[str, Mapping[str, Any]] = field(
        default_factory=dict
    )  # {mod: {passed, total, avg_score}}
    metrics: Mapping[str, float] = field(default_factory=dict)  # format-specific averages (BLEU-1, ...)
    model_bytes_pushed: int = 0
    error: str = ""
    folder: str = ""  # the device's folder name under devices/ (for links to its files)
    stand_in: str = ""  # phone: which board ran its missing samples; board: for which phones, how many
    shards: str = ""  # --shard: the identical devices that shared this row's samples, with their serials
    figures_over: str = ""  # --repeat/--warmup: what the latency figures are distributions over
    energy_j_p50: float | None = None  # ok samples with a trusted reading
    energy_mj_per_token_p50: float | None = None
    scoring_problem: str = ""  # the judge failed, or the scorer failed as a whole
    # 95% intervals, field -> (lo, hi): Wilson for pass rates, bootstrap for latency/speed/energy
    # figures (over samples; whole samples with their repeats under --repeat); stats.py
    intervals: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    # the strict content check (scoring/strict.py) beside the card's verdict
    strict_scored: int = 0  # rows that have a strict verdict (bleu1/rougeL)
    strict_passed: int = 0
    strict_pass_rate_pct: float | None = None
    card_only: tuple[str, ...] = ()  # ids the card passes and the strict check fails
    # settings the figures depend on (issue 22): shown in every table, compared by `compare`
    threads: str = ""  # --threads, "default" when the runtime chose
    max_output_tokens: int | None = None  # the token cap of the rows
    backend_requested: str = ""  # what was asked (`backend` is what ran)
    runner_kind: str = ""  # python | native | upstream (the rows' `runner`)
    peak_method: str = ""  # hwm_reset | sampled
    mem_sample_ms: float | None = None
    quantization: str = ""  # the model's (its largest section's), from run.json's model facts
    repeat: int | None = None  # --repeat (1: each sample once)
    sample_ms_p50: float | None = None  # the median time per sample (wall, ok samples), for "which device?"
    partial: str = ""  # "interrupted: 100/200" when the device did not run every sample (never marked best)
    # --settle (docs/conditions.md): each block's gate, and the flag of a device that did not settle
    # (shown with its status, never marked best)
    settle: tuple[Settle, ...] = ()
    unsettled: str = ""
    thermal: str = ""  # its thermal state over the run (report/conditions.py thermal_text): status, caps, stops


COLUMNS: tuple[Column, ...] = (
    Column("device", "Device"),
    Column("hardware", "Hardware"),
    Column("soc", "SoC"),
    Column("backend", "Backend"),
    Column("backend_requested", "Asked"),
    Column("threads", "Threads"),
    Column("runner_kind", "Runner"),
    Column("max_output_tokens", "Token cap", fmt="{:d}"),
    Column("quantization", "Quantization"),
    Column("samples", "Samples", fmt="{:d}"),
    FIGURE["pass_rate_pct"].column,
    FIGURE["strict_pass_rate_pct"].column,
    FIGURE["init_ms"].column,
    FIGURE["ttft_ms_p50"].column,
    FIGURE["ttft_ms_p90"].column,
    FIGURE["prefill_tps_p50"].column,
    FIGURE["decode_tps_p50"].column,
    FIGURE["sample_ms_p50"].column,
    FIGURE["peak_rss_mb"].column,
    Column("peak_method", "Peak method"),
    Column("mem_sample_ms", "Mem sampling", "ms", "{:g}"),
    FIGURE["thermal_max_c"].column,
    FIGURE["energy_j_p50"].column,
    FIGURE["energy_mj_per_token_p50"].column,
    Column("wall_s", "Wall", "s", "{:.1f}"),
    Column("stand_in", "Stand-in"),
    Column("shards", "Shards"),
    Column("figures_over", "Figures over"),
)
COLUMNS += tuple(f.column for f in figures(WIDE) if f.column not in COLUMNS)  # the catalogue's others
