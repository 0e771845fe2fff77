"""A finished (or interrupted) `edgefarm bench`, in memory: what the reports are printed from and what
the results database takes (history), with no folder read back in the bench's own process."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..farm.run_json import RunJson
from ..farm.types import DeviceOutcome
from .results import CellResult
from .rows import LlamaRow

BENCH_SCHEMA_VERSION = 1  # bench.json's


@dataclass(frozen=True)
class BenchRecord:
    """run.json's record with its end, every cell on every device (figures over its repetitions), the
    llama-bench rows made from them (rows.LlamaRow; what every printer prints), --sustain's passes and
    each device's outcome."""

    run_dir: Path
    run: RunJson
    cells: tuple[CellResult, ...]
    rows: tuple[LlamaRow, ...]
    sustain: Mapping[
        str, Mapping[str, Any] | None
    ]  # device -> its passes (sustained.py); {} without --sustain
    outcomes: tuple[DeviceOutcome, ...]
    interrupted: bool  # Ctrl-C: some cells may have fewer repetitions than asked, or none
    exit_code: int  # the run's rule: 130 interrupted, else the devices' (run/finish.exit_status)

    @property
    def run_id(self) -> str:
        return self.run.run_id

    def document(self) -> dict[str, Any]:
        """bench.json: every cell with every repetition, and the rows."""
        out = {"schema_version": BENCH_SCHEMA_VERSION, "run_id": self.run_id, "model": self.run.model.to_dict(),
               "cells": [c.to_json() for c in self.cells], "rows": [r.to_dict() for r in self.rows]}  # fmt: skip
        if self.sustain:  # per device: each pass's speed as % of the first, heat, first throttle
            out["sustain"] = dict(self.sustain)
        return out


__all__ = ["BENCH_SCHEMA_VERSION", "BenchRecord"]
