"""Dataset formats (EdgeMMEval, evalscope General-VQA / General-VMCQ / General-MCQ / General-FC) -> one Sample model.

A format is a `DatasetFormat`: `detect(path)` says whether it can read what the user pointed at,
`load(path, subset)` returns a `Dataset` holding valid samples and ALL problems found.
"""

from __future__ import annotations

import shlex

from ..bundled import BUNDLED_DATASET
from ..errors import DatasetError
from .formats import FORMATS, DatasetFormat
from .resolve import load_dataset
from .types import Constraint, Dataset, ExpectedCall, Part, Problem, Sample, Turn


def require_valid(ds: Dataset) -> Dataset:
    """Raise one DatasetError listing every problem, or return the dataset."""
    if ds.problems:
        listed = "\n".join(f"  - {p}" for p in ds.problems[:50])
        more = f"\n  ... and {len(ds.problems) - 50} more" if len(ds.problems) > 50 else ""
        raise DatasetError(
            f"{len(ds.problems)} problem(s) in dataset {ds.name}:\n{listed}{more}",
            fix=f"correct the rows above, then check with `edgefarm dataset check {shlex.quote(str(ds.root))}`",
            where=str(ds.root),
            problems=list(ds.problems),
        )
    return ds


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
