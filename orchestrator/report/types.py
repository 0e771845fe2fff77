"""The combined run report: the run stamp, one DeviceRow per device, one SampleRow per sample (a
cell per device) and the disagreements between devices; every printer renders from these records."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from android_runner.contract import FidelityScores, Settle

from ..catalogue import FIGURE, FIGURES, MEASURES, WIDE, Column, figures, with_fields


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


@dataclass(frozen=True)
@with_fields(m.name for m in MEASURES)  # a new catalogue measure: a field after these
class SampleCell:
    """One sample on one device: the answer, its score and its figures, side by side."""

    status: str
    passed: bool | None  # None: not scored (skipped)
    score: float | None
    ttft_ms: float | None
    decode_tps: float | None
    output: str  # the answer (ok) or the error text, cut at MAX_OUTPUT_CHARS
    error: str = ""
    scoring_error: str = ""
    prefill_tps: float | None = None
    wall_ms: float | None = None
    peak_rss_mb: float | None = None
    peak_anon_mb: float | None = None
    peak_file_mb: float | None = None
    thermal_c: float | None = None  # hottest reading after the sample
    backend: str = ""
    output_sha: str = ""  # sha256 prefix of the full output (ok only): equal outputs, equal hashes
    energy_j: float | None = None  # None: not measured, or not trusted (charging...)
    energy_mj_per_token: float | None = None
    stood_in: bool = False  # a stand-in board ran this sample for this phone
    ran_on: str = ""  # --shard: the serial of the phone of the group that ran it
    strict_passed: bool | None = None  # the strict content check (None: the row has none)
    runner: str = ""  # python | native | upstream
    max_output_tokens: int | None = None
    backend_requested: str = ""
    peak_method: str = ""
    mem_sample_ms: float | None = None
    fidelity: FidelityScores | None = None  # --fidelity: the row's scores and answer tokens (bounded)
    # the sample's conditions and its place in time (the trace printer, report/trace.py, lays them out)
    infer_ms: float | None = None  # inside the runtime's send calls (prefill + decode); wall_ms - infer_ms: set-up
    cooldown_s: float | None = None  # --cooldown-c: waited before the sample
    battery_ma: float | None = None  # mean battery current during the sample (phones with a current reading)
    thermal_status: int | None = None  # the OS's thermal status after the sample (Android's thermal service)


SAMPLE_FIELDS = ("status", "passed", "strict_passed", "score", "scoring_error", "ttft_ms", "prefill_tps", "decode_tps", "wall_ms",
                 "peak_rss_mb", "peak_anon_mb", "peak_file_mb", "thermal_c", "backend", "backend_requested", "runner",
                 "max_output_tokens", "peak_method", "mem_sample_ms", "stood_in", "ran_on", "error",
                 "output")  # fmt: skip
SAMPLE_FIELDS += tuple(m.name for m in MEASURES if m.name not in SAMPLE_FIELDS)  # every catalogue measure


@dataclass(frozen=True)
class SampleRow:
    id: str
    modality: str
    task: str
    cells: Mapping[str, SampleCell]  # device name -> cell
    reference: str = ""
    prompt: str = ""  # the sample's text (every turn's), for the drill-down
    media: tuple[str, ...] = ()  # its media, as paths relative to the run folder (report/media.py)


@dataclass(frozen=True)
class RunStamp:
    """What ran, where and when: the same block heads every format."""

    model_path: str = ""
    model_size_bytes: int | None = None
    model_sha256: str = ""
    dataset_path: str = ""
    dataset_format: str = ""
    dataset_sha256: str = ""
    samples_run: int | None = None
    samples_total: int | None = None
    skipped: Mapping[str, int] = field(default_factory=dict)  # device -> samples not scored
    started_at: str = ""
    finished_at: str = ""
    host: str = ""
    versions: Mapping[str, str] = field(default_factory=dict)
    backends: tuple[str, ...] = ()
    flags: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PairAgreement:
    a: str
    b: str
    common: int  # samples scored on both
    same_verdict: int  # both pass or both fail
    both_ok: int  # samples that ran ok on both
    same_output: int  # of those, identical answers (greedy decoding should give the same text)

    @property
    def verdict_pct(self) -> float | None:
        return round(100.0 * self.same_verdict / self.common, 1) if self.common else None

    @property
    def output_pct(self) -> float | None:
        return round(100.0 * self.same_output / self.both_ok, 1) if self.both_ok else None


@dataclass(frozen=True)
class Disagreement:
    id: str
    modality: str
    passed_on: tuple[str, ...]
    failed_on: tuple[str, ...]
    output_groups: int  # distinct answers among the devices that ran it ok


@dataclass(frozen=True)
class Disagreements:
    pairs: tuple[PairAgreement, ...] = ()
    samples: tuple[Disagreement, ...] = ()  # pass on one device, fail on another; or answers differ
    # "gpu" -> samples that fail on that backend's devices but pass on another device (same by hardware)
    fails_by_backend: Mapping[str, int] = field(default_factory=dict)
    fails_by_hardware: Mapping[str, int] = field(default_factory=dict)

    def worst_pair(self) -> PairAgreement | None:
        scored = [p for p in self.pairs if p.common]
        if not scored:
            return None
        return min(scored, key=lambda p: (p.verdict_pct, p.output_pct if p.output_pct is not None else 100.0))


@dataclass(frozen=True)
class PairedFigure:
    """B against A on the samples both ran ok: the geometric mean of the per-sample ratios B/A with
    its 95% bootstrap interval (stats.paired_ratio_ci)."""

    field: str  # SampleCell field: ttft_ms, decode_tps, wall_ms, energy_j...
    label: str
    higher_is_better: bool
    ratio: float | None
    lo: float | None
    hi: float | None
    pairs: int
    significant: bool  # the interval excludes 1 and the ratio is beyond the noise threshold


@dataclass(frozen=True)
class Paired:
    """Device (or run) B against A on the same samples: verdict flips with an exact McNemar test,
    and each figure as a paired ratio."""

    a: str
    b: str
    common: int  # samples scored on both
    a_only: int  # passed on A, failed on B
    b_only: int  # failed on A, passed on B
    p_value: float  # exact McNemar on (a_only, b_only)
    figures: tuple[PairedFigure, ...] = ()
    strict_a_only: int = 0  # the same flips by the strict content check
    strict_b_only: int = 0
    strict_p_value: float = 1.0

    def figure(self, field: str) -> PairedFigure | None:
        return next((f for f in self.figures if f.field == field), None)


@dataclass(frozen=True)
class FidelitySample:
    """One sample on one device against the reference device (report/fidelity.py)."""

    id: str
    tokens: int  # tokens of the reference answer compared (0: not both scored)
    mean_abs_dlogp: float | None  # nats per token
    max_abs_dlogp: float | None
    worst_token: int | None  # position (from 0) of the largest departure
    first_diff: int | None  # first token where the greedy answers differ (None: identical, or not compared)
    answers_compared: bool = False
    note: str = ""  # e.g. the two devices split the reference into different numbers of tokens


@dataclass(frozen=True)
class DeviceFidelity:
    """A device against the reference device: |Δ log p| per token of the reference answers (mean and
    max, with 95% bootstrap intervals over samples), identical greedy answers, the first divergence,
    and the verdict. `reason`: why a figure is missing (shown as `—` with it), never a silent zero."""

    device: str
    reference: str
    scored: int  # samples scored on both devices with the same token count
    tokens: int
    mean_abs_dlogp: float | None = None
    max_abs_dlogp: float | None = None
    answers_compared: int = 0
    answers_identical: int = 0
    first_diff_median: float | None = None  # over the samples whose answers differ
    verdict: str = ""  # report/fidelity.py SAME | DIFFERENT | UNDECIDED; "" (reference, or no figure)
    reason: str = ""
    worst: tuple[str, ...] = ()  # the samples with the largest departures, largest first
    mismatched: tuple[str, ...] = ()  # samples whose reference has another token count here
    intervals: Mapping[str, tuple[float, float]] = field(default_factory=dict)  # mean/max/identical_pct
    samples: tuple[FidelitySample, ...] = ()

    @property
    def identical_pct(self) -> float | None:
        return (
            round(100.0 * self.answers_identical / self.answers_compared, 1)
            if self.answers_compared
            else None
        )


@dataclass(frozen=True)
class FidelityReport:
    reference: str  # --reference, else the first CPU device
    devices: tuple[DeviceFidelity, ...]  # every device, the reference first
    thresholds: Mapping[str, float] = field(default_factory=dict)


# ---------------------------------------------------------------- the backend matrix (report/matrix.py)


@dataclass(frozen=True)
class Flip:
    """A sample whose verdict differs between the CPU and this backend, both answers side by side."""

    id: str
    cpu_passed: bool
    passed: bool
    cpu_output: str
    output: str
    first_diff: int | None = None  # first differing answer token (--fidelity), None: not tokenized


@dataclass(frozen=True)
class MatrixCell:
    device: str
    backend: str
    unit: str  # its row of the report (pixel-8@gpu)
    reason: str = ""  # why it did not run as asked ("" ran): the failure kind, then the words
    samples: int = 0
    pass_rate_pct: float | None = None
    pass_ci: tuple[float, float] | None = None
    validity_pct: float | None = None  # tool calls / structured outputs that parse (the scorer's)
    # the device row's figures the matrix shows (report/matrix.MATRIX_FIGURES, catalogue fields)
    figures: Mapping[str, float | None] = field(default_factory=dict)
    against: str = ""  # the same device's CPU unit ("" for the CPU itself, or a device without one)
    common: int = 0  # samples scored on both
    diff_pts: float | None = None  # paired accuracy difference, percentage points (this - CPU)
    diff_ci: tuple[float, float] | None = None
    p_value: float | None = None  # exact McNemar
    flagged: bool = False  # McNemar rejects: this backend's verdicts differ from the CPU's
    speed_ratio: float | None = None  # time per sample against the CPU's (paired geometric mean)
    flips: tuple[Flip, ...] = ()
    mean_abs_dlogp: float | None = None  # --fidelity against the CPU unit, nats per token
    fidelity_verdict: str = ""
    marks: Mapping[str, str] = field(default_factory=dict)  # figure -> best / tied (report/verdict.py)

    # it answered: a unit that failed, and one whose every row is the runtime's fallback (the runners
    # record a row that ran on another engine than asked as an error with the runtime's words), did not
    ran: bool = True


@dataclass(frozen=True)
class BackendMatrix:
    devices: tuple[str, ...]
    backends: tuple[str, ...]
    cells: tuple[MatrixCell, ...]
    alpha: float = 0.05  # stats.ALPHA, the McNemar level a cell is flagged at

    def cell(self, device: str, backend: str) -> MatrixCell | None:
        return next((c for c in self.cells if c.device == device and c.backend == backend), None)

    @property
    def not_run(self) -> tuple[MatrixCell, ...]:
        return tuple(c for c in self.cells if not c.ran)



@dataclass(frozen=True)
class UnitFigure:
    """--units: one figure over a group of identical devices (report/units.py). Each unit's `level` is
    its value relative to the group on the same samples (geometric mean over the samples of its value /
    the samples' geometric mean over the units; 1.0: typical). `between_cv`: the coefficient of variation
    of the levels (the unit-to-unit spread) with its 95% bootstrap interval over the samples;
    `within_cv`: the median over units of a unit's sample-to-sample scatter around its own level."""

    field: str  # the measure (catalogue): wall_ms, ttft_ms, prefill_tps, decode_tps, energy_j
    label: str
    higher_is_better: bool
    samples: int  # samples every unit ran ok with a value
    between_cv: float | None
    between_cv_ci: tuple[float, float] | None
    within_cv: float | None
    levels: Mapping[str, float] = field(default_factory=dict)  # unit -> its level
    # unit -> its level against the median of the OTHER units, with that ratio's 95% interval
    against_others: Mapping[str, tuple[float, float, float]] = field(default_factory=dict)


@dataclass(frozen=True)
class UnitGroup:
    """--units: a group of identical devices that each ran every sample, its figures and its outliers
    (a unit over OUTLIER_FRACTION off the other units' median on a figure, the interval excluding 1)."""

    name: str
    units: tuple[str, ...]
    figures: tuple[UnitFigure, ...] = ()
    outliers: tuple[str, ...] = ()  # in words, each naming the unit


@dataclass(frozen=True)
class RunReport:
    schema_version: int
    run_id: str
    run: Mapping[str, Any]  # run.json content (model, dataset, flags, versions, host)
    devices: tuple[DeviceRow, ...]
    samples: tuple[SampleRow, ...] = ()
    unusable: tuple[Mapping[str, Any], ...] = ()
    notes: tuple[str, ...] = ()
    stamp: RunStamp = field(default_factory=RunStamp)
    disagreements: Disagreements = field(default_factory=Disagreements)
    baseline: str = ""  # the device the others are compared with (--baseline; else the first)
    paired: tuple[Paired, ...] = ()  # every other device against the baseline
    host_sharing: tuple[Mapping[str, Any], ...] = ()  # run.json: devices sharing this host's CPU
    sustain: Mapping[str, Any] = field(default_factory=dict)  # --sustain: device -> curve (sustain.py)
    fidelity: FidelityReport | None = None  # --fidelity runs only (report/fidelity.py)
    matrix: BackendMatrix | None = None  # a run of several backends per device (report/matrix.py)
    units: tuple[UnitGroup, ...] = ()  # --units runs only (report/units.py)
