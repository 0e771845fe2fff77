"""One home for sample statuses, runner exit codes and how a runner's end is classified.

Every runner (the Python runner on boards and this host, the native runner and the upstream binary
on phones) ends a sample in one of STATUSES; the host side of each runner classifies how a process
ended with `classify` and nothing else. Stdlib only: this module is copied to boards.
"""

from __future__ import annotations

import re
from enum import Enum


class Status(str, Enum):
    """How one sample ended on one device (a str, so it is JSON and compares with plain strings)."""

    OK = "ok"
    ERROR = "error"  # the runtime refused or failed the sample (its message is on the row)
    TIMEOUT = "timeout"  # no answer within the sample timeout
    CRASH = "crash"  # the runner died by a signal (SIGABRT, SIGSEGV, ...)
    # out of memory, with evidence: the runtime's own out-of-memory words, the kernel's or the
    # low-memory killer's record, or a peak near the device's available memory (memory_pressure)
    OOM = "oom"
    KILLED = "killed"  # SIGKILL without evidence of memory pressure (what was seen is on the row)
    UNSUPPORTED = "unsupported"  # the model or runtime cannot take this input: skipped, not failed
    # the OS stopped the runner for heat: SIGKILL while the phone's thermal status was THERMAL_STOP_STATUS
    # or worse (Android's thermal service; the heat evidence is on the row), without memory evidence
    THERMAL_STOP = "thermal_stop"

    def __str__(self) -> str:
        return self.value


STATUSES = tuple(s.value for s in Status)
SKIPPED_STATUSES = (Status.UNSUPPORTED.value,)  # left out of scoring, listed as skipped
FAILED_STATUSES = tuple(s.value for s in Status if s not in (Status.OK, Status.UNSUPPORTED))

TIMEOUT_EXIT = 124  # a sample ran past its timeout (the runners' own watchdogs and coreutils' timeout)
MODEL_UNLOADABLE_EXIT = 65  # the engine could not be created from the model (the host's ModelError)
BACKEND_UNAVAILABLE_EXIT = 69  # sysexits EX_UNAVAILABLE: the backend asked (gpu/npu) cannot be had here
USAGE_EXIT = 2  # the runner was started wrongly (missing job, bad flag)
DEFAULT_MAX_OUTPUT_TOKENS = 128  # the cap on generated tokens per turn when neither row nor flag sets one
DEFAULT_SAMPLE_TIMEOUT_S = 300.0  # seconds one sample may take before it is recorded as timeout

SIGKILL, SIGABRT = 9, 6
SHELL_SIGNAL_BASE = 128  # a POSIX shell reports death by signal N as exit status 128 + N


def signal_from_shell_status(rc: int | None) -> int | None:
    """A shell's `$?` of 128+N means the command died by signal N; anything else is an exit code."""
    if rc is not None and SHELL_SIGNAL_BASE < rc < SHELL_SIGNAL_BASE + 64:
        return rc - SHELL_SIGNAL_BASE
    return None


# The kernel's OOM killer (mm/oom_kill.c "Out of memory: Killed process %d (%s)", older "Kill
# process"; "invoked oom-killer") and Android's lmkd ("Kill '%s' (%d), uid %d, oom_score_adj %d to
# free %ldkB rss", as logcat shows it under the lowmemorykiller tag; real captures:
# tests/unit/fixtures/real/lmkd_*.txt).
OOM_RECORD = re.compile(
    r"Out of memory: Kill(?:ed)? process|invoked oom-killer|oom-kill:"
    r"|lowmemorykiller\b.*\bKill '|\blmkd\b.*\bKill '"
)
# Android's thermal status (PowerManager.THERMAL_STATUS_*) at which a SIGKILL counts as the OS stopping the
# runner for heat: SEVERE (3) and up, where the platform sheds load (CRITICAL 4, EMERGENCY 5, SHUTDOWN 6).
THERMAL_STOP_STATUS = 3
# A peak this close to the memory the device had available counts as memory pressure.
NEAR_AVAILABLE_FRACTION = 0.9


def memory_pressure(
    peak_mb: float | None = None, available_mb: float | None = None, log_text: str = ""
) -> str:
    """Evidence that a SIGKILL came from memory pressure, in words for the row; "" when there is none.

    `log_text`: what the kernel or lmkd logged around the kill (dmesg, logcat); `available_mb`:
    the memory the device had for the runner (MemAvailable before the run, else its RAM).
    """
    m = OOM_RECORD.search(log_text or "")
    if m:
        line = next((ln.strip() for ln in log_text.splitlines() if OOM_RECORD.search(ln)), m.group(0))
        return f"memory pressure recorded: {line}"
    if peak_mb and available_mb and peak_mb >= NEAR_AVAILABLE_FRACTION * available_mb:
        return f"peak {peak_mb:.0f} MB of {available_mb:.0f} MB available"
    return ""


def classify(
    exit_code: int | None, signal: int | None, failure: str = "", pressure: str = "", heat: str = ""
) -> Status:
    """(exit code, signal, the runtime's failure kind, memory evidence, heat evidence) -> the sample's status.

    `failure` is a kind found in the runtime's own words ("oom", "context_overflow", ...; "" when
    it said nothing). A SIGKILL is `oom` only with evidence (`failure == "oom"`, or `pressure` from
    memory_pressure), else `killed`: edgefarm never SIGKILLs a runner except at a deadline (which
    is TIMEOUT_EXIT), but a user, a watchdog or a vendor's task killer can; with `heat` (the phone's
    thermal status at the kill was THERMAL_STOP_STATUS or worse) and no memory evidence it is
    `thermal_stop`. Any other signal is a crash.
    """
    if exit_code == TIMEOUT_EXIT:
        return Status.TIMEOUT
    if failure == "oom" or (signal == SIGKILL and pressure):
        return Status.OOM
    if signal == SIGKILL:
        return Status.THERMAL_STOP if heat else Status.KILLED
    if signal is not None:
        return Status.CRASH
    if failure == "crash":
        return Status.CRASH
    if exit_code not in (0, None) or failure:
        return Status.ERROR
    return Status.OK
