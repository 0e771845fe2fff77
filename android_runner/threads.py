"""The CPU thread count a LiteRT-LM engine really runs with: counted, or the runtime's rule.

The runtime has no getter for it and does not log it. What it does is visible from outside: a CPU
engine's creation starts its XNNPACK thread pool, one worker fewer than its thread count (the calling
thread is the other), kept until the engine is deleted. Measured with LiteRT-LM 0.18.1 on this host: 0,
1, 2, 3, 5 pool threads for thread_count 1, 2, 3, 4, 6, and 3 when none is set (docs/bench.md). Now
and then the creation also runs a short-lived thread (gone within 50 ms, 2 creations in 40 here), so
the pool is the threads that are new across `engine_create` AND still alive after the engine's first
work (the session's own threads start later and are not new across the creation); plus one.

Where the process's threads cannot be listed (no /proc/self/task), or what was seen is not a pool's
(more than MAX_THREADS), the rule stands in and says so: the count asked, else the runtime's documented
default, `CpuConfig::number_of_threads = 4` (upstream runtime/executor/llm_executor_settings.h: "Number of
threads. The default value is 4."). Only the CPU backend has a thread count. Stdlib only: it runs on
devices.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

RUNTIME_DEFAULT_THREADS = 4  # LiteRT-LM's CpuConfig::number_of_threads when none is set
MAX_THREADS = 256  # the settings' own bound (android_runner/settings.py)
TASKS = "/proc/self/task"

# how a row's thread count was known
COUNTED = "counted"  # the engine's thread pool, counted across its creation
ASKED = "asked"  # the rule: the count the engine was given (threads not countable here)
RUNTIME_DEFAULT = "runtime default"  # the rule: none given, the runtime's documented default


def thread_ids(tasks: str = TASKS) -> frozenset[int] | None:
    """This process's thread ids, None where they cannot be listed."""
    try:
        return frozenset(int(t) for t in os.listdir(tasks) if t.isdigit())
    except OSError:
        return None


def pool_threads(
    before: frozenset[int] | None, created: frozenset[int] | None, alive: frozenset[int] | None
) -> int | None:
    """An engine's thread count: the threads new between `before` and `created` (the process's ids
    around its creation) that are still `alive` after its first work, plus the calling thread."""
    if before is None or created is None or alive is None:
        return None
    return len((created - before) & alive) + 1


@dataclass(frozen=True)
class ThreadsRan:
    """The CPU threads one engine ran with, and how that is known (COUNTED, ASKED, RUNTIME_DEFAULT)."""

    count: int
    source: str

    @classmethod
    def of(cls, asked: int | None, counted: int | None) -> ThreadsRan:
        """The count seen (`pool_threads`, a runner's report), else the rule: when none was seen or it
        is not a pool's."""
        if counted is not None and 1 <= counted <= MAX_THREADS:
            return cls(counted, COUNTED)
        if asked:
            return cls(asked, ASKED)
        return cls(RUNTIME_DEFAULT_THREADS, RUNTIME_DEFAULT)


@dataclass(frozen=True)
class EngineThreads:
    """The process's thread ids around one CPU engine's creation, to count its pool once it has worked."""

    asked: int | None  # the thread count the engine was given (None: the runtime's default)
    before: frozenset[int] | None
    created: frozenset[int] | None

    def ran(self, alive: frozenset[int] | None = None) -> ThreadsRan:
        """The threads it ran with, counted against the threads `alive` now (default: this process's)."""
        alive = thread_ids() if alive is None else alive
        return ThreadsRan.of(self.asked, pool_threads(self.before, self.created, alive))
