"""Dataset formats (EdgeMMEval, evalscope General-VQA / General-VMCQ) -> one Sample model.

A format is a `DatasetFormat`: `detect(path)` says whether it can read what the user pointed at,
`load(path, subset)` returns a `Dataset` holding valid samples and ALL problems found.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

from ..bundled import BUNDLED_DATASET
from ..errors import DatasetError
from ..registry import Registry
from .types import Constraint, Dataset, ExpectedCall, Part, Problem, Sample, Turn


@dataclass(frozen=True)
class DatasetFormat:
    """A dataset format: `detect(path)` says whether it reads what the user pointed at, `load(path,
    subset)` returns the Dataset. Both live in the format's module, imported when first asked: a run
    whose dataset comes from the host's memo (resolve.py) loads no format at all (25-30 ms)."""

    name: str
    module: str  # orchestrator.datasets.<module> defines detect and load

    def _loaded(self):
        return importlib.import_module(f"{__name__}.{self.module}")

    def detect(self, path: Path) -> bool:
        return self._loaded().detect(path)

    def load(self, path: Path, subset: str | None) -> Dataset:
        return self._loaded().load(path, subset)


FORMATS = Registry[DatasetFormat]("dataset format")

# In detection order (most specific first).
FORMATS.add("edgemmeval", DatasetFormat("edgemmeval", "edgemmeval"))
FORMATS.add("general_vqa", DatasetFormat("general_vqa", "evalscope_vqa"))
FORMATS.add("general_vmcq", DatasetFormat("general_vmcq", "evalscope_vmcq"))
FORMATS.add("general_fc", DatasetFormat("general_fc", "evalscope_fc"))


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
