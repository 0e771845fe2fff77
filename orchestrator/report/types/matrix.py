"""The device x backend matrix of a matrix run (report/matrix.py): each unit against the same device's
CPU, its flips."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Flip:
    """A sample whose verdict differs between the CPU and this backend, both answers side by side."""

    id: str
    cpu_passed: bool
    passed: bool
    cpu_output: str
    output: str
    first_diff: int | None = None  # first differing answer token (--fidelity), None: not tokenized


@dataclass(frozen=True)
class MatrixCell:
    device: str
    backend: str
    unit: str  # its row of the report (pixel-8@gpu)
    reason: str = ""  # why it did not run as asked ("" ran): the failure kind, then the words
    samples: int = 0
    pass_rate_pct: float | None = None
    pass_ci: tuple[float, float] | None = None
    validity_pct: float | None = None  # tool calls / structured outputs that parse (the scorer's)
    # the device row's figures the matrix shows (report/matrix.MATRIX_FIGURES, catalogue fields)
    figures: Mapping[str, float | None] = field(default_factory=dict)
    against: str = ""  # the same device's CPU unit ("" for the CPU itself, or a device without one)
    common: int = 0  # samples scored on both
    diff_pts: float | None = None  # paired accuracy difference, percentage points (this - CPU)
    diff_ci: tuple[float, float] | None = None
    p_value: float | None = None  # exact McNemar
    flagged: bool = False  # McNemar rejects: this backend's verdicts differ from the CPU's
    speed_ratio: float | None = None  # time per sample against the CPU's (paired geometric mean)
    flips: tuple[Flip, ...] = ()
    mean_abs_dlogp: float | None = None  # --fidelity against the CPU unit, nats per token
    fidelity_verdict: str = ""
    marks: Mapping[str, str] = field(default_factory=dict)  # figure -> best / tied (report/verdict.py)

    # it answered: a unit that failed, and one whose every row is the runtime's fallback (the runners
    # record a row that ran on another engine than asked as an error with the runtime's words), did not
    ran: bool = True


@dataclass(frozen=True)
class BackendMatrix:
    devices: tuple[str, ...]
    backends: tuple[str, ...]
    cells: tuple[MatrixCell, ...]
    alpha: float = 0.05  # stats.ALPHA, the McNemar level a cell is flagged at

    def cell(self, device: str, backend: str) -> MatrixCell | None:
        return next((c for c in self.cells if c.device == device and c.backend == backend), None)

    @property
    def not_run(self) -> tuple[MatrixCell, ...]:
        return tuple(c for c in self.cells if not c.ran)
