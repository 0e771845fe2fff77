"""The host side of an on-device runner: stage files, execute with streamed events, collect.

A device's kind names the runner it uses (devices/kinds.py); the session calls it through this interface
and never asks what kind of device it is talking to.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from android_runner.contract import JobItem, SampleResult
from android_runner.settings import RunnerSettings
from android_runner.status import DEFAULT_SAMPLE_TIMEOUT_S

from ..devices.base import Device
from ..devices.types import DeviceInfo, PushStats
from ..models import ModelSummary
from ..registry import Registry

DEFAULT_COOLDOWN_MAX_S = 120.0  # the longest wait for --cooldown-c before a sample runs anyway
# --settle (docs/conditions.md): every sensor changed less than this over the window, waited for at most
# the maximum; 2 °C over 60 s is the gate of the 2026 cross-platform study of sustained phone inference
DEFAULT_SETTLE_C = 2.0
DEFAULT_SETTLE_S = 60.0
DEFAULT_SETTLE_MAX_S = 600.0


@dataclass(frozen=True)
class RunOptions:
    """How a device runs the job; every default here is the command line's too."""

    run_id: str
    backend: str = "cpu"
    threads: int | None = None
    sample_timeout_s: float = DEFAULT_SAMPLE_TIMEOUT_S
    cooldown_c: float | None = None  # before each sample, wait until the device is at or below this
    cooldown_max_s: float = DEFAULT_COOLDOWN_MAX_S  # ... for at most this long
    max_num_tokens: int | None = (
        None  # --max-num-tokens: the runtime's token limit (KV cache); None: the model's
    )
    repeat: int = 1  # --repeat: every sample runs this many times (the first run is scored)
    warmup: int = 0  # --warmup: this many runs first, never counted
    sustain: int = 1  # --sustain: the samples this many times back to back, no cooldown
    settle_c: float | None = None  # --settle: before the block, wait until no sensor changes this much ...
    settle_s: float = DEFAULT_SETTLE_S  # ... over this window
    settle_max_s: float = DEFAULT_SETTLE_MAX_S  # ... for at most this long (then measured, flagged)

    def for_device(
        self, device: Device, backend_override: str | None, threads_override: int | None
    ) -> RunOptions:
        """The command line's --backend/--threads win over the device's devices.yaml settings."""
        return replace(
            self,
            backend=backend_override or device.backend or "cpu",
            threads=threads_override or device.threads,
        )

    @property
    def cooldown_wait_s(self) -> float:
        """The longest a cooldown can add to one sample (for run deadlines)."""
        return self.cooldown_max_s + 5.0 if self.cooldown_c is not None else 0.0

    @property
    def settle_wait_s(self) -> float:
        """The longest the settle gate can add to a block (once, for run deadlines)."""
        return self.settle_max_s + 5.0 if self.settle_c is not None else 0.0

    def runner_settings(
        self,
        *,
        model: PurePosixPath,
        cache: PurePosixPath,
        vision: bool,
        audio: bool,
        lib: PurePosixPath | None = None,
        allow_runtime: bool = False,
    ) -> RunnerSettings:
        """The device's runner settings (android_runner/settings.py), the one record every runner reads
        from its job folder's `settings` file: these options with where staging put the model, cache and
        library. Whole numbers on the device: milliseconds and milli-degrees."""
        return RunnerSettings(
            model=str(model),
            cache_dir=str(cache),
            backend=self.backend,
            vision_backend="cpu" if vision else "",
            audio_backend="cpu" if audio else "",
            threads=self.threads or 0,
            max_num_tokens=self.max_num_tokens or 0,
            sample_timeout_ms=round(self.sample_timeout_s * 1000),
            cooldown_mc=None if self.cooldown_c is None else round(self.cooldown_c * 1000),
            cooldown_max_ms=round(self.cooldown_max_s * 1000),
            settle_mc=None if self.settle_c is None else round(self.settle_c * 1000),
            settle_window_ms=round(self.settle_s * 1000),
            settle_max_ms=round(self.settle_max_s * 1000),
            lib="" if lib is None else str(lib),
            allow_runtime=int(allow_runtime),
        )


@dataclass(frozen=True)
class Staged:
    """Where things landed on the device."""

    root: PurePosixPath  # the device's edgefarm work folder
    model: PurePosixPath
    job: PurePosixPath  # the job bundle folder (job.jsonl, media/, results.jsonl)
    model_push: PushStats = field(default_factory=PushStats)
    other_push: PushStats = field(default_factory=PushStats)
    runner: Mapping[str, Any] = field(
        default_factory=dict
    )  # which runner and runtime ran (name, sha256, version)
    notes: tuple[str, ...] = ()  # what staging found and mended (a damaged copy of the model pushed again)


@dataclass(frozen=True)
class Check:
    """One thing a run needs on a device."""

    need: str  # authorization | reachable | runner | runtime | storage | memory | power | thermal
    ok: bool
    found: str  # what is there (or missing)
    fix: str = ""  # the next step when not ok
    blocks: bool = True  # a failed blocking check keeps the device out of a run; others flag figures

    @property
    def line(self) -> str:
        return self.found + (f"; fix: {self.fix}" if not self.ok and self.fix else "")


@dataclass(frozen=True)
class Need:
    """What the run puts on a device: model and media bytes, the model's memory floor, where it goes."""

    model_bytes: int
    media_bytes: int = 0
    floor_bytes: int | None = None  # weights + KV cache at the run's token limit (model_facts.py)
    model_sha256: str = ""
    model_name: str = ""


@dataclass
class RunnerEvents:
    """Callbacks the session gives the runner; each may be called from the runner's thread.

    `ready` is called once per model load (a runner start that got its engine), so the session
    counts loads from it. `stop` is set on Ctrl-C: the runner stops its device-side process, starts
    nothing new and returns what finished.
    """

    ready: Callable[[float | None], None] = lambda init_ms: None
    begin: Callable[[str], None] = lambda sample_id: None
    result: Callable[[SampleResult], None] = lambda result: None
    note: Callable[[str], None] = lambda message: None
    piece: Callable[[str, str], None] = lambda sample_id, text: None  # `edgefarm serve`: an answer's piece
    stop: threading.Event = field(default_factory=threading.Event)


class RunnerAdapter(Protocol):
    name: str

    def checks(self, info: DeviceInfo, need: Need, env: Mapping[str, str]) -> tuple[Check, ...]:
        """What a run needs on the device beyond answering (runner, runtime, storage...), checked on the
        host and with at most a short device call; readiness.py adds the device's state."""

    def stage(self, device: Device, bundle: Path, model: ModelSummary, opts: RunOptions) -> Staged: ...

    def execute(
        self, device: Device, staged: Staged, items: Sequence[JobItem], opts: RunOptions, events: RunnerEvents
    ) -> list[SampleResult]:
        """Run every item not yet done; returns the results of ALL items, earlier runs included."""

    def collect(self, device: Device, staged: Staged, out_dir: Path) -> None:
        """Pull raw results, logs and traces into out_dir."""

    def stop(self, device: Device, staged: Staged) -> None:
        """Stop the runner's process on the device for certain (Ctrl-C, a lost connection)."""


RUNNERS = Registry[Callable[[Device], RunnerAdapter]]("runner")
