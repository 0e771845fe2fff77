"""The farm's records: a device session's `Phase`, its `DeviceOutcome` (also a file, outcome.json:
its one codec is `to_dict` / `from_dict` below) and the `Score` a session calls. The farm, its
workers, the stand-ins, the run folder and the cluster's farm make and read them; the run's stages
above (run/types.py) only collect them."""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any

from android_runner.contract import SampleResult

from ..datasets.types import Dataset
from ..devices.types import DeviceInfo, PushStats

if TYPE_CHECKING:  # named in annotations only
    from pathlib import Path

    from ..datasets.types import Sample
    from ..devices.base import Device
    from ..devices.types import Inventory
    from ..jobs import JobOptions
    from ..models import ModelSummary
    from ..runners.base import RunOptions
    from ..scoring import ScoreReport

PUSH_KEYS = tuple(f.name for f in fields(PushStats))


class Phase(str, enum.Enum):
    """Where a device's session is (the progress display shows it)."""

    WAITING = "waiting"  # not started: its turn (this host's CPU is shared) or its thread has not begun
    INFO = "info"
    STAGING = "staging"
    LOADING = "loading model"
    RUNNING = "running"
    COLLECTING = "collecting"
    DONE = "done"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


@dataclass
class DeviceOutcome:
    """One device's session: filled while it runs, then written as outcome.json (`to_dict`).

    With --resume the figures a session counts (model loads, wall time, bytes pushed) are added to
    the ones its earlier sessions recorded (`after`), so they cover the run and all its resumes."""

    name: str
    kind: str
    info: DeviceInfo | None = None  # device.json, not in outcome.json
    results: list[SampleResult] = field(default_factory=list)  # results.jsonl
    # repeats.jsonl (--repeat, --sustain): the other runs of each sample, not in outcome.json
    repeats: list[SampleResult] = field(default_factory=list)
    report: dict[str, Any] | None = None  # report.json
    error: str = ""
    error_code: int = 0  # the EdgefarmError's exit code when the device failed
    model_push: PushStats = field(default_factory=PushStats)
    other_push: PushStats = field(default_factory=PushStats)
    wall_s: float | None = None
    notes: list[str] = field(default_factory=list)
    runner: dict[str, Any] = field(default_factory=dict)  # which runner and runtime ran (runners/stamp.py)
    model_loads: int = 0  # engine loads on the device: 1 per runner start that got its engine
    interrupted: bool = False  # stopped by Ctrl-C before every sample ran
    sessions: int = 1  # this session and the earlier ones of the run (--resume) it adds up
    stand_in: dict[str, Any] | None = None  # a phone whose missing samples a board ran (fallback.py)

    FILE_KEYS = ("name", "kind", "error", "error_code", "wall_s", "model_push", "other_push", "notes", "runner",
                 "model_loads", "interrupted", "sessions", "stand_in")  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        """outcome.json."""
        out = {k: getattr(self, k) for k in self.FILE_KEYS}
        out["model_push"], out["other_push"] = asdict(self.model_push), asdict(self.other_push)
        if self.stand_in is None:
            del out["stand_in"]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DeviceOutcome:
        """outcome.json as `to_dict` writes it (an older edgefarm's too: a missing key takes its
        default, a value of the wrong type is dropped, never trusted)."""

        def typed(key: str, kind: type | tuple[type, ...], default: Any) -> Any:
            value = data.get(key)
            return (
                value
                if isinstance(value, kind) and not (isinstance(value, bool) and kind is not bool)
                else default
            )

        def pushes(key: str) -> PushStats:
            value = data.get(key) if isinstance(data.get(key), Mapping) else {}
            return PushStats(**{k: v for k in PUSH_KEYS if isinstance(v := value.get(k), int)})

        wall = typed("wall_s", (int, float), None)
        return cls(
            name=str(data.get("name", "")),
            kind=str(data.get("kind", "")),
            error=typed("error", str, ""),
            error_code=typed("error_code", int, 0),
            model_push=pushes("model_push"),
            other_push=pushes("other_push"),
            wall_s=float(wall) if wall is not None else None,
            notes=[n for n in typed("notes", list, []) if isinstance(n, str)],
            runner=typed("runner", dict, {}),
            model_loads=typed("model_loads", int, 0),
            interrupted=typed("interrupted", bool, False),
            sessions=typed("sessions", int, 1),
            stand_in=typed("stand_in", dict, None),
        )

    def after(self, earlier: DeviceOutcome | None) -> DeviceOutcome:
        """This session's outcome with the counted figures of the run's earlier sessions added."""
        if earlier is None:
            return self
        self.model_loads += earlier.model_loads
        self.model_push = earlier.model_push + self.model_push
        self.other_push = earlier.other_push + self.other_push
        if earlier.wall_s is not None:
            self.wall_s = earlier.wall_s + (self.wall_s or 0.0)
        self.sessions += earlier.sessions
        return self


# A device's scorer as the sessions call it: the run's `scoring.RunScoring` (the plan holds the
# format's `ScoreFn`; the execute stage makes the run's RunScoring from it)
Score = Callable[[Dataset, Mapping[str, "str | None"]], "ScoreReport"]


@dataclass(frozen=True)
class StandIns:
    """The run as the stand-in boards need it (fallback.run_stand_ins, --fallback): which boards may
    stand in for which phones, the devices selected and the phones found unusable, what a session of
    theirs runs (the run's samples, model, job options, each device's options and the scorer), where,
    and how long a lost phone may take to come back. execute.py makes it from the plan."""

    inventory: Inventory
    table: Mapping[str, Sequence[str]]  # phone -> the boards that may stand in for it ("*": any phone)
    selected: Sequence[Device]  # the run's devices (and a cluster's boards)
    unusable: Sequence[DeviceInfo]  # phones found but unusable (or, by name, absent)
    dataset: Dataset
    samples: Sequence[Sample]
    model: ModelSummary
    job_opts: JobOptions
    options_for: Callable[[Any, str], RunOptions]  # RunPlan.options_for: a device's options in a session
    score: Score
    run_id: str
    run_dir: Path
    wait_s: float  # --fallback-wait
