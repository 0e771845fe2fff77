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
