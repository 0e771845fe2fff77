from __future__ import annotations

import os
import threading

from orchestrator.idle import HeadStart, IdleWorker


def test_the_idle_worker_runs_in_order_at_the_lowest_priority_and_survives_a_failure():
    worker, seen, done = IdleWorker("test-idle"), [], threading.Event()
    worker.submit(lambda: seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id())))
    worker.submit(lambda: 1 / 0)  # dropped: a head start only
    worker.submit(lambda: (seen.append("after"), done.set()))
    assert done.wait(10)
    assert seen == [19, "after"]


def test_a_head_start_is_computed_once_by_whoever_comes_first():
    calls = []
    value = HeadStart(lambda: calls.append(1) or {"v": len(calls)})
    worker, done = IdleWorker("test-head-start"), threading.Event()
    worker.submit(value.get)
    worker.submit(done.set)
    assert done.wait(10)
    assert value.get() == {"v": 1} and calls == [1]  # the worker's result, not a second computation
    late = HeadStart(lambda: calls.append(2) or "now")
    assert late.get() == "now" and late.get() == "now" and calls == [1, 2]  # never queued: computed here
