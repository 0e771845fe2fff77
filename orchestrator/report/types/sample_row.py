"""A sample of the run report: one `SampleCell` per device (the answer, its score, its catalogue
measures) in its `SampleRow`, and the per-sample fields the csv/jsonl exports and the results database
keep (`SAMPLE_FIELDS`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from android_runner.contract import FidelityScores

from ...catalogue import MEASURES, with_fields


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
