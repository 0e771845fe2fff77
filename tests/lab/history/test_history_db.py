"""The results database under two controllers and a killed one, on a SQLite file and on a real
PostgreSQL server (postgres.py): two processes writing at once lose nothing and keep a run they both
write once; a process killed in the middle of its write leaves no part of its run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orchestrator.history.db import opened

WRITER = Path(__file__).with_name("writer.py")
RUNS_EACH = 8


def _database(kind: str, tmp_path: Path, request, name: str) -> str:
    if kind == "sqlite":
        return str(tmp_path / "history.sqlite")
    return request.getfixturevalue("postgres").new_database(name)


def _count(db: str, sql: str) -> int:
    with opened(db) as store:
        return store.rows(sql)[0][0]


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_two_controllers_writing_at_once_lose_nothing(kind, tmp_path, request):
    db = _database(kind, tmp_path, request, "two_controllers")
    with opened(db):
        pass  # migrated once, before both start
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, str(WRITER), "many", db, tag, str(RUNS_EACH), str(go)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for tag in ("aaaa", "bbbb")]  # fmt: skip
    time.sleep(0.5)
    go.write_text("")
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-2000:] for o in outs]
    statuses = [o[0].split() for o in outs]
    # each writer's own runs recorded; the shared run recorded by exactly one of them
    assert all(s[:RUNS_EACH] == ["recorded"] * RUNS_EACH for s in statuses), statuses
    assert sorted(s[-1] for s in statuses) == ["recorded", "unchanged"], statuses
    runs = 2 * RUNS_EACH + 1
    assert _count(db, "SELECT count(*) FROM history_runs") == runs
    assert _count(db, "SELECT count(*) FROM history_devices") == 3 * runs
    assert _count(db, "SELECT count(*) FROM history_samples") == 3 * 12 * runs


def _writing(kind: str, db: str, journal: Path) -> bool:
    if kind == "sqlite":
        return journal.exists()
    with opened(db) as store:  # another connection that has written in an open transaction
        return store.rows("SELECT count(*) FROM pg_stat_activity WHERE backend_xid IS NOT NULL "
                          "AND pid <> pg_backend_pid()")[0][0] > 0  # fmt: skip


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_controller_killed_while_writing_leaves_no_half_written_run(kind, tmp_path, request):
    db = _database(kind, tmp_path, request, "killed")
    proc = subprocess.Popen([sys.executable, str(WRITER), "big", db], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert proc.stdout.readline().strip() == "writing", proc.stderr.read()[-2000:]
        deadline = time.monotonic() + 60
        while not _writing(kind, db, Path(db + "-journal")):
            assert proc.poll() is None, "the write ended before it could be killed"
            assert time.monotonic() < deadline, "the writer never started writing"
            time.sleep(0.01)
        time.sleep(0.2)  # well inside its 120,000 sample rows
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        rest = proc.communicate(timeout=30)[0]
    assert "written" not in rest, "the writer finished before the kill: the test proved nothing"
    for table in ("history_runs", "history_devices", "history_figures", "history_samples"):
        assert _count(db, f"SELECT count(*) FROM {table}") == 0, table
    if kind == "sqlite":
        assert _count(db, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check <> 'ok'") == 0


def test_a_postgresql_write_behind_another_sessions_lock_gives_up_in_bounded_time(
    tmp_path, request, monkeypatch
):
    """Another session holds history_runs locked (an open transaction): a run's write waits at most
    LOCK_TIMEOUT_S, then fails whole with the database named and the run folder's import as the fix,
    and `record_at_end` (what `edgefarm run` calls) reports it instead of raising."""
    import psycopg

    from orchestrator.history import db as dbmod
    from orchestrator.history.entry import run_entry
    from orchestrator.history.record import record_at_end

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "unit" / "history"))
    from history_runs import report

    monkeypatch.setattr(dbmod, "LOCK_TIMEOUT_S", 1)
    url = request.getfixturevalue("postgres").new_database("locked")
    with opened(url):
        pass  # migrated
    holder = psycopg.connect(url, autocommit=False)
    try:
        holder.execute("LOCK TABLE history_runs IN ACCESS EXCLUSIVE MODE")  # held until rollback
        t0 = time.monotonic()
        rep = report("20260101-000000-aaaa", "2026-01-01T00:00:00+00:00", {"pixel-8": 100.0})
        recorded, why = record_at_end(url, run_entry(rep, str(tmp_path), {}))  # fmt: skip
        waited = time.monotonic() - t0
    finally:
        holder.rollback()
        holder.close()
    assert recorded is None and "lock timeout" in why and "history import" in why, why
    assert waited < 30, waited  # 1 s lock timeout, the connect and the migration check: never unbounded
    with opened(url) as store:  # nothing of the run was written
        assert store.rows("SELECT count(*) FROM history_runs") == [(0,)]
