"""The CPU thread count a row names (android_runner/threads.py): the engine's pool as counted (threads new
across its creation and still alive after its first work), else the rule (the count asked, else
LiteRT-LM's documented default), each marked with how it is known."""

from __future__ import annotations

import threading

from android_runner.threads import (
    ASKED,
    COUNTED,
    RUNTIME_DEFAULT,
    RUNTIME_DEFAULT_THREADS,
    EngineThreads,
    ThreadsRan,
    pool_threads,
    thread_ids,
)


def _start(n: int, stop: threading.Event) -> list[threading.Thread]:
    workers = [threading.Thread(target=stop.wait) for _ in range(n)]
    for w in workers:
        w.start()
    return workers


def test_the_pool_is_the_threads_new_across_creation_that_outlive_it_plus_the_calling_thread():
    """3 pool workers and one short-lived thread start during the 'creation'; a session thread starts
    after it: the count is 4, as a 4-thread engine's."""
    before = thread_ids()
    stop_pool, stop_brief, stop_session = threading.Event(), threading.Event(), threading.Event()
    pool = _start(3, stop_pool)
    brief = _start(1, stop_brief)
    seen = EngineThreads(None, before, thread_ids())
    stop_brief.set()
    brief[0].join()
    session = _start(1, stop_session)
    try:
        assert seen.ran() == ThreadsRan(4, COUNTED)
    finally:
        for e in (stop_pool, stop_session):
            e.set()
        for w in pool + session:
            w.join()


def test_the_rule_stands_in_where_nothing_was_counted_and_says_so(tmp_path):
    assert thread_ids(str(tmp_path / "no-such-folder")) is None
    ids = frozenset({1, 2})
    assert pool_threads(None, ids, ids) is None and pool_threads(ids, None, ids) is None
    assert EngineThreads(2, None, ids).ran(ids) == ThreadsRan(2, ASKED)
    assert EngineThreads(None, ids, None).ran(ids) == ThreadsRan(RUNTIME_DEFAULT_THREADS, RUNTIME_DEFAULT)
    assert RUNTIME_DEFAULT_THREADS == 4  # upstream CpuConfig::number_of_threads


def test_a_count_no_pool_could_give_is_the_rule_and_a_runners_count_is_taken():
    assert ThreadsRan.of(3, 0) == ThreadsRan(3, ASKED)
    assert ThreadsRan.of(None, 400) == ThreadsRan(RUNTIME_DEFAULT_THREADS, RUNTIME_DEFAULT)
    assert ThreadsRan.of(None, 6) == ThreadsRan(6, COUNTED)  # the native runner's count (bench.c)
