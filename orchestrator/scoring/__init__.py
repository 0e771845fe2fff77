"""Scoring: pure metric functions and one scorer per dataset format.

A scorer takes the dataset and a mapping test_id -> raw output (None = not run) and returns the
report.json dict for that format. `edgefarm score` and `edgefarm run` both go through SCORERS.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..datasets.types import Dataset
from ..registry import Registry


@dataclass(frozen=True)
class Scorer:
    format: str  # dataset format name it scores
    score: Callable[[Dataset, Mapping[str, str | None]], dict[str, Any]]


SCORERS = Registry[Scorer]("scorer")

# -- registrations --
from .edgemm import score_edgemm

SCORERS.add("edgemmeval", Scorer("edgemmeval", score_edgemm))
from .evalscope import score_vmcq, score_vqa

SCORERS.add("general_vqa", Scorer("general_vqa", score_vqa))
SCORERS.add("general_vmcq", Scorer("general_vmcq", score_vmcq))
# -- end registrations --
