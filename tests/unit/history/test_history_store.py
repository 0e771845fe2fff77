"""The results database on SQLite: a run's record written in one transaction, read back the same,
idempotent, replaced when the run changed; an unreachable database is an error naming it."""

from __future__ import annotations

import sqlite3

import pytest
from history_runs import report

from orchestrator.errors import ConfigError, HistoryUnavailable
from orchestrator.history.db import Database, opened, resolve
from orchestrator.history.entry import run_entry
from orchestrator.history.record import record_at_end
from orchestrator.history.schema import MIGRATIONS
from orchestrator.history.store import (
    Exclusion,
    Filters,
    exclude,
    excluded,
    include,
    read_history,
    read_samples,
    run_devices,
    write_run,
)


def _entry(run_id="20260101-000000-aaaa", started="2026-01-01T00:00:00+00:00", **kw):
    rep = report(run_id, started, {"pixel-8": 100.0, "s24": 120.0}, **kw)
    return run_entry(rep, f"/runs/{run_id}", rep.run["device_versions"])


def _count(path, table):
    with sqlite3.connect(path) as c:
        return c.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_a_run_is_recorded_once_and_read_back_with_its_figures_and_samples(tmp_path):
    path = tmp_path / "h.sqlite"
    entry = _entry()
    with opened(str(path)) as db:
        assert db.version() == len(MIGRATIONS)
        assert write_run(db, entry) == "recorded"
        assert write_run(db, entry) == "unchanged"  # importing twice: one copy
        rows = read_history(db)
        cells = read_samples(db, entry.run_id, "pixel-8")
    assert _count(path, "history_runs") == 1 and _count(path, "history_samples") == 24
    assert [(r.device, r.point.runtime_version) for r in rows] == [("pixel-8", "0.17.0"), ("s24", "0.17.0")]
    pixel = rows[0].point.figures
    assert pixel["sample_ms_p50"].lo <= pixel["sample_ms_p50"].value <= pixel["sample_ms_p50"].hi
    assert (
        99 < pixel["sample_ms_p50"].value < 101 and "ttft_ms_p50" in pixel and "pass_rate_pct" not in pixel
    )  # not scored
    assert cells == entry.devices[0].samples  # every kept field survives the round trip
    assert rows[0].config == entry.devices[0].config and rows[0].config["model"] == "tiny.litertlm"


def test_a_changed_run_replaces_its_record_in_one_piece(tmp_path):
    path = str(tmp_path / "h.sqlite")
    with opened(path) as db:
        write_run(db, _entry())
        assert write_run(db, _entry(runtime="0.18.0")) == "replaced"  # e.g. a resumed run, recorded again
        (row,) = read_history(db, Filters(devices=("s24",)))
    assert row.point.runtime_version == "0.18.0"
    assert _count(path, "history_devices") == 2 and _count(path, "history_figures") > 0


def test_filters_select_by_device_model_runtime_backend_and_shape(tmp_path):
    with opened(str(tmp_path / "h.sqlite")) as db:
        write_run(db, _entry())
        write_run(
            db,
            _entry("20260102-000000-bbbb", "2026-01-02T00:00:00+00:00", runtime="0.18.0", model_sha="e" * 64),
        )
        assert len(read_history(db)) == 4
        assert {r.point.run_id for r in read_history(db, Filters(runtimes=("0.18.0",)))} == {
            "20260102-000000-bbbb"
        }
        assert len(read_history(db, Filters(models=("eeee",)))) == 2  # a sha256 prefix
        assert len(read_history(db, Filters(models=("tiny.litertlm",), devices=("s24",)))) == 2
        assert read_history(db, Filters(models=("a%",))) == []  # a LIKE wildcard is not a prefix
        assert len(read_history(db, Filters(shapes=("12 samples",)))) == 4
        assert read_history(db, Filters(backends=("gpu",))) == []


def test_a_database_newer_than_this_edgefarm_is_refused(tmp_path):
    path = tmp_path / "h.sqlite"
    with opened(str(path)):
        pass
    with sqlite3.connect(path) as c:
        c.execute("INSERT INTO history_schema (version) VALUES (?)", (len(MIGRATIONS) + 1,))
    with pytest.raises(
        HistoryUnavailable,
        match=f"schema version {len(MIGRATIONS) + 1}; this edgefarm knows up to {len(MIGRATIONS)}",
    ):
        Database.open(str(path))


def test_an_unreachable_database_is_said_with_its_name_and_no_password(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(HistoryUnavailable, match=r"cannot open the results database") as e:
        Database.open(str(blocker / "h.sqlite"))  # a folder that is a file
    assert "history import" in str(e.value)
    rep = report("r", "t", {"a": 1.0})
    recorded, why = record_at_end("postgresql://u:hunter2@127.0.0.1:1/db", run_entry(rep, str(tmp_path), {}))
    assert recorded is None and "cannot connect" in why and "hunter2" not in why and "127.0.0.1:1" in why


def test_the_database_is_the_flag_else_the_environment_else_the_data_folder(tmp_path):
    assert resolve("x.sqlite", {"EDGEFARM_DB": "y"}) == "x.sqlite"
    assert resolve(None, {"EDGEFARM_DB": "y"}) == "y"
    assert resolve(None, {}).endswith("edgefarm/history.sqlite")
    with pytest.raises(HistoryUnavailable, match="at most 4096"):
        resolve("x" * 5000)


def test_a_version_1_database_is_migrated_in_place_keeping_its_runs(tmp_path):
    path = tmp_path / "h.sqlite"
    with sqlite3.connect(path) as c:  # what the first release of the history wrote
        c.execute("CREATE TABLE history_schema (version INTEGER NOT NULL)")
        for statement in MIGRATIONS[0]:
            c.execute(statement)
        c.execute("INSERT INTO history_schema (version) VALUES (1)")
        c.execute("INSERT INTO history_runs VALUES ('r1', 'run', 's', 'f', '/runs/r1', 'h', '0.1.0', '', 'm', "
                  "'aa', '', 'bb', 'cc', 1, '1 samples', '{}', '{}', 'dd')")  # fmt: skip
        c.execute("INSERT INTO history_devices VALUES ('r1', 'p', 'adb', '', '', 'cpu', '', '', '', '', '{}', "
                  "'k', '')")  # fmt: skip
        c.execute("INSERT INTO history_figures VALUES ('r1', 'p', 'wall_ms_p50', 100.0, 90.0, 110.0)")
    with opened(str(path)) as db:
        assert db.version() == len(MIGRATIONS) == 5
        # v3: the history's own time per sample is the catalogue's one name for it
        assert db.rows("SELECT figure, value FROM history_figures") == [("sample_ms_p50", 100.0)]
        assert db.rows("SELECT run_id, model_size_bytes, quantization FROM history_runs") == [
            ("r1", None, "")
        ]
        assert db.rows("SELECT count(*) FROM history_bench_rows") == [(0,)]
        assert db.rows("SELECT count(*) FROM history_exclusions") == [(0,)]


def test_reading_never_creates_a_database(tmp_path):
    missing = tmp_path / "typo" / "histroy.sqlite"
    with pytest.raises(ConfigError, match="there is no results database at") as e:
        Database.open(str(missing), create=False)
    assert e.value.exit_code == 2 and "history import runs/" in str(e.value)
    assert not missing.exists() and not missing.parent.exists()
    with pytest.raises(ConfigError, match="it would be a folder"):
        Database.open(str(tmp_path), create=False)


def test_a_damaged_sqlite_file_is_named_with_a_fix_for_a_file_not_a_server(tmp_path):
    path = tmp_path / "h.sqlite"
    path.write_bytes(b"this is not a database, just some bytes " * 100)
    with pytest.raises(HistoryUnavailable, match="file is not a database") as e:
        Database.open(str(path), create=False)
    assert (
        "server" not in str(e.value)
        and "move it aside" in str(e.value)
        and "history import runs/" in str(e.value)
    )


def test_an_excluded_run_is_recorded_listed_and_undone(tmp_path):
    with opened(str(tmp_path / "h.sqlite")) as db:
        entry = _entry()
        write_run(db, entry)
        assert run_devices(db, entry.run_id) == ["pixel-8", "s24"] and run_devices(db, "nope") == []
        exclude(db, Exclusion(entry.run_id, "", "a CPU hog ran beside it", "2026-01-01T00:00:00+00:00"))
        exclude(db, Exclusion(entry.run_id, "", "a CPU hog", "2026-01-02T00:00:00+00:00"))  # replaces
        assert excluded(db) == {(entry.run_id, ""): "a CPU hog"}
        assert (
            include(db, entry.run_id, "") == 1 and excluded(db) == {} and include(db, entry.run_id, "") == 0
        )
