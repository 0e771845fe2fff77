"""Dataset formats (EdgeMMEval, evalscope General-VQA / General-VMCQ) -> one Sample model.

A format is a `DatasetFormat`: `detect(path)` says whether it can read what the user pointed at,
`load(path, subset)` returns a `Dataset` holding valid samples and ALL problems found.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..bundled import BUNDLED_DATASET
from ..errors import DatasetError
from ..registry import Registry
from .types import Constraint, Dataset, ExpectedCall, Part, Problem, Sample, Turn


@dataclass(frozen=True)
class DatasetFormat:
    name: str
    detect: Callable[[Path], bool]
    load: Callable[[Path, str | None], Dataset]  # (path, subset) -> Dataset


FORMATS = Registry[DatasetFormat]("dataset format")

# Format modules register themselves here, in detection order (most specific first).
# -- registrations --
from . import edgemmeval

FORMATS.add("edgemmeval", DatasetFormat("edgemmeval", edgemmeval.detect, edgemmeval.load))
from . import evalscope_vmcq, evalscope_vqa

FORMATS.add("general_vqa", DatasetFormat("general_vqa", evalscope_vqa.detect, evalscope_vqa.load))
FORMATS.add("general_vmcq", DatasetFormat("general_vmcq", evalscope_vmcq.detect, evalscope_vmcq.load))
from . import evalscope_fc

FORMATS.add("general_fc", DatasetFormat("general_fc", evalscope_fc.detect, evalscope_fc.load))
# -- end registrations --


def require_valid(ds: Dataset) -> Dataset:
    """Raise one DatasetError listing every problem, or return the dataset."""
    if ds.problems:
        listed = "\n".join(f"  - {p}" for p in ds.problems[:50])
        more = f"\n  ... and {len(ds.problems) - 50} more" if len(ds.problems) > 50 else ""
        raise DatasetError(
            f"{len(ds.problems)} problem(s) in dataset {ds.name}:\n{listed}{more}",
            fix=f"correct the rows above, then check with `edgefarm dataset check {ds.root}`",
            where=str(ds.root),
            problems=list(ds.problems),
        )
    return ds


from .resolve import load_dataset  # after FORMATS: resolve.py imports it

__all__ = [
    "BUNDLED_DATASET",
    "FORMATS",
    "Constraint",
    "Dataset",
    "DatasetFormat",
    "ExpectedCall",
    "Part",
    "Problem",
    "Sample",
    "Turn",
    "load_dataset",
    "require_valid",
]
