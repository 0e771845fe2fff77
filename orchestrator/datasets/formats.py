"""The dataset formats, by name, in detection order (most specific first)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..registry import Registry
from . import edgemmeval, evalscope_fc, evalscope_mcq, evalscope_vmcq, evalscope_vqa
from .types import Dataset


@dataclass(frozen=True)
class DatasetFormat:
    """A dataset format: `detect(path)` says whether it reads what the user pointed at, `load(path,
    subset)` returns the Dataset, holding valid samples and ALL problems found."""

    name: str
    detect: Callable[[Path], bool]
    load: Callable[[Path, str | None], Dataset]


FORMATS = Registry[DatasetFormat]("dataset format")
FORMATS.add("edgemmeval", DatasetFormat("edgemmeval", edgemmeval.detect, edgemmeval.load))
FORMATS.add("general_vqa", DatasetFormat("general_vqa", evalscope_vqa.detect, evalscope_vqa.load))
FORMATS.add("general_vmcq", DatasetFormat("general_vmcq", evalscope_vmcq.detect, evalscope_vmcq.load))
FORMATS.add("general_mcq", DatasetFormat("general_mcq", evalscope_mcq.detect, evalscope_mcq.load))
FORMATS.add("general_fc", DatasetFormat("general_fc", evalscope_fc.detect, evalscope_fc.load))
