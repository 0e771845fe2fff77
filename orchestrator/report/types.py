"""The combined run report: one DeviceRow per device; every printer renders from these records."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Column:
    field: str
    label: str
    unit: str = ""
    fmt: str = "{}"

    def render(self, value: Any) -> str:
        if value is None or value == "":
            return "–"
        try:
            return self.fmt.format(value)
        except (ValueError, TypeError):
            return str(value)


@dataclass(frozen=True)
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
    status_counts: Mapping[str, int] = field(default_factory=dict)
    by_modality: Mapping[str, Mapping[str, Any]] = field(
        default_factory=dict
    )  # {mod: {passed, total, avg_score}}
    metrics: Mapping[str, float] = field(default_factory=dict)  # format-specific averages (BLEU-1, ...)
    model_bytes_pushed: int = 0
    error: str = ""


COLUMNS: tuple[Column, ...] = (
    Column("device", "Device"),
    Column("hardware", "Hardware"),
    Column("soc", "SoC"),
    Column("backend", "Backend"),
    Column("samples", "Samples", fmt="{:d}"),
    Column("pass_rate_pct", "Pass", "%", "{:.1f}"),
    Column("init_ms", "Init", "ms", "{:.0f}"),
    Column("ttft_ms_p50", "TTFT p50", "ms", "{:.1f}"),
    Column("ttft_ms_p90", "TTFT p90", "ms", "{:.1f}"),
    Column("prefill_tps_p50", "Prefill", "tok/s", "{:.0f}"),
    Column("decode_tps_p50", "Decode", "tok/s", "{:.0f}"),
    Column("peak_rss_mb", "Peak RSS", "MB", "{:.0f}"),
    Column("wall_s", "Wall", "s", "{:.1f}"),
)


@dataclass(frozen=True)
class SampleCell:
    """One sample on one device: the answer, its score and its latency, side by side."""

    status: str
    passed: bool | None  # None: not scored (skipped)
    score: float | None
    ttft_ms: float | None
    decode_tps: float | None
    output: str


@dataclass(frozen=True)
class SampleRow:
    id: str
    modality: str
    task: str
    cells: Mapping[str, SampleCell]  # device name -> cell


@dataclass(frozen=True)
class RunReport:
    schema_version: int
    run_id: str
    run: Mapping[str, Any]  # run.json content (model, dataset, flags, versions, host)
    devices: tuple[DeviceRow, ...]
    samples: tuple[SampleRow, ...] = ()
    unusable: tuple[Mapping[str, Any], ...] = ()
    notes: tuple[str, ...] = ()
