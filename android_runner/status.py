"""One home for sample statuses, runner exit codes and how a runner's end is classified.

Every runner (the Python runner on boards and this host, the native runner and the upstream binary
on phones) ends a sample in one of STATUSES; the host side of each runner classifies how a process
ended with `classify` and nothing else. Stdlib only: this module is copied to boards.
"""

from __future__ import annotations

from enum import Enum


class Status(str, Enum):
    """How one sample ended on one device (a str, so it is JSON and compares with plain strings)."""

    OK = "ok"
    ERROR = "error"  # the runtime refused or failed the sample (its message is on the row)
    TIMEOUT = "timeout"  # no answer within the sample timeout
    CRASH = "crash"  # the runner died by a signal (SIGABRT, SIGSEGV, ...)
    OOM = "oom"  # killed by SIGKILL (the low-memory killer) or the runtime ran out of memory
    UNSUPPORTED = "unsupported"  # the model or runtime cannot take this input: skipped, not failed

    def __str__(self) -> str:
        return self.value


STATUSES = tuple(s.value for s in Status)
SKIPPED_STATUSES = (Status.UNSUPPORTED.value,)  # left out of scoring, listed as skipped
FAILED_STATUSES = tuple(s.value for s in Status if s not in (Status.OK, Status.UNSUPPORTED))

TIMEOUT_EXIT = 124  # a sample ran past its timeout (the runners' own watchdogs and coreutils' timeout)
MODEL_UNLOADABLE_EXIT = 65  # the engine could not be created from the model (the host's ModelError)
USAGE_EXIT = 2  # the runner was started wrongly (missing job, bad flag)
DEFAULT_MAX_OUTPUT_TOKENS = 128  # the cap on generated tokens per turn when neither row nor flag sets one

SIGKILL, SIGABRT = 9, 6
SHELL_SIGNAL_BASE = 128  # a POSIX shell reports death by signal N as exit status 128 + N


def signal_from_shell_status(rc: int | None) -> int | None:
    """A shell's `$?` of 128+N means the command died by signal N; anything else is an exit code."""
    if rc is not None and SHELL_SIGNAL_BASE < rc < SHELL_SIGNAL_BASE + 64:
        return rc - SHELL_SIGNAL_BASE
    return None


def classify(exit_code: int | None, signal: int | None, failure: str = "") -> Status:
    """(exit code, signal, the runtime's failure kind) -> the sample's status.

    `failure` is a kind found in the runtime's own words ("oom", "context_overflow", ...; "" when
    it said nothing): a SIGKILL is the low-memory killer (edgefarm never SIGKILLs a runner except
    at a deadline, which is TIMEOUT_EXIT), any other signal is a crash.
    """
    if exit_code == TIMEOUT_EXIT:
        return Status.TIMEOUT
    if signal == SIGKILL or failure == "oom":
        return Status.OOM
    if signal is not None:
        return Status.CRASH
    if failure == "crash":
        return Status.CRASH
    if exit_code not in (0, None) or failure:
        return Status.ERROR
    return Status.OK
