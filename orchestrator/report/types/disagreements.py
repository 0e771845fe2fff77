"""Where devices disagree (report/combine.py): each pair's agreement on verdicts and answers, the
samples that pass on one device and fail on another, and the failures by backend and hardware."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


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
