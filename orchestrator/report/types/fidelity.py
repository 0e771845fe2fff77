"""`--fidelity` (report/fidelity.py): each device's per-token log p against the reference device, per
sample and over the run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


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
