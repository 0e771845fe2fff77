"""One error tree: every error names where it happened and what to do next."""

from __future__ import annotations


class EdgefarmError(Exception):
    """Base of every error the CLI prints without a traceback."""

    exit_code = 1

    def __init__(self, what: str, *, fix: str, where: str = "") -> None:
        self.what = what
        self.fix = fix
        self.where = where
        prefix = f"{where}: " if where else ""
        super().__init__(f"{prefix}{what}\n  fix: {fix}")

    def __reduce__(self):
        """Pickle by fields (keyword-only `fix` defeats Exception's default): errors raised on a
        farm host reach the controller through Ray (docs/cluster.md)."""
        return (_rebuild, (type(self), self.what, self.fix, self.where, dict(self.__dict__)))


def _rebuild(cls: type, what: str, fix: str, where: str, state: dict) -> EdgefarmError:
    err = cls.__new__(cls)
    EdgefarmError.__init__(err, what, fix=fix, where=where)
    err.__dict__.update(state)
    return err


class ConfigError(EdgefarmError):
    """A broken devices.yaml, flag or model path."""

    exit_code = 2


class DatasetError(EdgefarmError):
    """A dataset that cannot be read or is invalid."""

    exit_code = 2

    def __init__(self, what: str, *, fix: str, where: str = "", problems: list | None = None) -> None:
        super().__init__(what, fix=fix, where=where)
        self.problems = list(problems or [])


class ResultsError(EdgefarmError):
    """A results file (test_id -> output) that is not what the scorer takes."""

    exit_code = 2


class ModelError(EdgefarmError):
    """A model file that is missing or that the runtime cannot load."""

    exit_code = 4


class BackendUnavailable(EdgefarmError):
    """The backend asked for (gpu, npu) cannot be had on a device: the runtime said so.

    Not a broken model: the same model runs on another backend. `what` carries the runtime's own
    words, `fix` names the backend; `backend` and `kind` (gpu_unavailable, npu_dispatch_missing, ...)
    are kept for the run's report."""

    exit_code = 6

    def __init__(self, what: str, *, fix: str, where: str = "", backend: str = "", kind: str = "") -> None:
        super().__init__(what, fix=fix, where=where)
        self.backend = backend
        self.kind = kind


def backend_unavailable(backend: str, kind: str, words: str, where: str) -> BackendUnavailable:
    """The one message for a backend the runtime could not have (every runner's host side raises it)."""
    fixes = {
        "gpu": "run with --backend cpu, or give this device the GPU runtime: its OpenCL/WebGPU driver and "
        "LiteRT-LM's GPU accelerator libraries (prebuilt/<platform>/libLiteRt*Accelerator.*) next to the "
        "runner or on LD_LIBRARY_PATH",
        "npu": "run with --backend cpu (or gpu), or give this device the NPU runtime: the vendor's dispatch "
        "library (libLiteRtDispatch_<vendor>.so) and a model compiled for this SoC's NPU",
    }
    return BackendUnavailable(
        f"the {backend} backend is not available on this device ({kind}); the runtime said:\n{words}",
        where=where,
        fix=fixes.get(backend, f"run with another --backend than {backend}"),
        backend=backend,
        kind=kind,
    )


class DeviceError(EdgefarmError):
    """A device that cannot be reached or that failed during setup."""

    exit_code = 3


class DeviceLost(DeviceError):
    """A device that vanished (unplugged, offline, connection dropped)."""


class UnknownName(EdgefarmError):
    """A registry lookup for a name nobody registered."""

    exit_code = 2


class OutputError(EdgefarmError):
    """A run folder, report or other output file that cannot be written (permissions, disk full, ...)."""

    exit_code = 5


class NeedsSetup(DeviceError):
    """A board that answers but cannot run yet (no runtime): `edgefarm setup NAME` prepares it.

    Carries the board's facts (`info`, state "needs setup"), so listings show them."""

    def __init__(self, what: str, *, fix: str, where: str = "", info=None) -> None:
        super().__init__(what, fix=fix, where=where)
        self.info = info


class HistoryUnavailable(EdgefarmError):
    """The results database cannot be opened, migrated, read or written (`edgefarm history`); `edgefarm
    run` says so and carries on, its run folder being the record."""

    exit_code = 7
