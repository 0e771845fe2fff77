"""The results database: where it is (`--db`, `EDGEFARM_DB`, else a file in the user's data folder),
one connection to it (SQLite through the standard library, PostgreSQL through psycopg), the schema's
migrations applied on open, and one transaction per write.

Every failure to reach or use the database becomes `HistoryUnavailable` naming it (a PostgreSQL
URL's password masked), so `edgefarm run` can say so and carry on: the run folder is the record.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..errors import ConfigError, HistoryUnavailable
from ..redact import redact
from .schema import MIGRATIONS, SCHEMA_TABLE, catalogue_columns

ENV = "EDGEFARM_DB"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")
BUSY_TIMEOUT_S = 60.0  # SQLite: how long a writer waits for another controller's transaction
CONNECT_TIMEOUT_S = 10  # PostgreSQL: how long to wait for the server
# PostgreSQL: how long a statement waits for another session's lock, and runs at most (a run's write
# once waited 89 s behind another session's open transaction); past them the write is given up whole
# and the run folder, which keeps everything, is imported later (`edgefarm history import RUN_DIR`)
LOCK_TIMEOUT_S = 15
STATEMENT_TIMEOUT_S = 300
MAX_TARGET_CHARS = 4096
_LOCK_KEY = 0x6564676566  # PostgreSQL advisory lock taken while migrating ("edgef")
_IMPORT_LATER = "the run folders keep everything: `edgefarm history import runs/` loads them later"
_FIX = {
    "postgresql": "check --db / EDGEFARM_DB (postgresql://user@host:port/db with the server up, and no other "
    f"session holding its tables locked for longer than {LOCK_TIMEOUT_S} s); {_IMPORT_LATER}",
    "sqlite": "check --db / EDGEFARM_DB: a SQLite file you can read and write on a disk with room; a damaged "
    'file ("not a database", "malformed"): move it aside and rebuild it from the run folders with '
    "`edgefarm history import runs/ --db PATH`",
}


def default_path() -> Path:
    """history.sqlite in the user's data folder (~/.local/share/edgefarm on Linux)."""
    import platformdirs

    return platformdirs.user_data_path("edgefarm") / "history.sqlite"


def resolve(target: str | None, env: Mapping[str, str] = os.environ) -> str:
    """The database to use: --db, else EDGEFARM_DB, else the default file."""
    value = target or env.get(ENV) or str(default_path())
    if len(value) > MAX_TARGET_CHARS:
        raise HistoryUnavailable(f"the database name is {len(value)} characters long (at most {MAX_TARGET_CHARS})",
                                 where="--db", fix="pass a shorter path or URL")  # fmt: skip
    return value


def is_postgres(target: str) -> bool:
    return target.startswith(POSTGRES_SCHEMES)


class Database:
    """One connection; SQL is written with `?` placeholders for both dialects."""

    def __init__(self, conn: Any, dialect: str, where: str) -> None:
        self._conn = conn
        self.dialect = dialect
        self.where = where

    @classmethod
    def open(cls, target: str, create: bool = True) -> Database:
        """Connect and bring the schema up to date (each migration once, whoever else is connecting).
        `create` False (reading): a SQLite file that is not there is an error, never a new empty database."""
        where = redact(target)
        if is_postgres(target):
            db = cls(_connect_postgres(target, where), "postgresql", where)
        else:
            db = cls(_connect_sqlite(Path(target).expanduser(), where, create), "sqlite", where)
        try:
            db.migrate()
        except BaseException:
            db.close()
            raise
        return db

    def close(self) -> None:
        try:
            self._conn.close()
        except Exception as e:  # closing a broken connection must not hide why it broke
            if not _is_db_error(e):
                raise

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.dialect == "postgresql" else sql

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        with self._errors("query"):
            cur = self._conn.cursor()
            cur.execute(self._sql(sql), tuple(params))
            return cur

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            with self._errors("write"):
                self._conn.cursor().executemany(self._sql(sql), [tuple(r) for r in rows])

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        return [tuple(r) for r in self.execute(sql, params).fetchall()]

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All or nothing: a process killed inside leaves the database as it was (SQLite's journal and
        PostgreSQL's own transaction roll it back). SQLite takes its write lock at the start, so two
        controllers' writes queue instead of failing half-way."""
        self.execute("BEGIN IMMEDIATE" if self.dialect == "sqlite" else "BEGIN")
        try:
            yield
        except BaseException:
            try:
                self._conn.rollback() if self.dialect == "postgresql" else self._conn.execute("ROLLBACK")
            except Exception as e:  # a dead connection rolls back on its own; the first error is the one
                if not _is_db_error(e):
                    raise
            raise
        self.execute("COMMIT")

    def migrate(self) -> None:
        with self.transaction():
            if self.dialect == "postgresql":  # one migrating controller at a time
                self.execute("SELECT pg_advisory_xact_lock(?)", (_LOCK_KEY,))
            self.execute(f"CREATE TABLE IF NOT EXISTS {SCHEMA_TABLE} (version INTEGER NOT NULL)")
            (current,) = self.rows(f"SELECT COALESCE(MAX(version), 0) FROM {SCHEMA_TABLE}")[0]
            if current > len(MIGRATIONS):
                raise HistoryUnavailable(
                    f"the database has schema version {current}; this edgefarm knows up to {len(MIGRATIONS)}",
                    where=self.where,
                    fix="upgrade edgefarm (pip install -U edgefarm), or use another --db",
                )
            for version in range(current + 1, len(MIGRATIONS) + 1):
                for statement in MIGRATIONS[version - 1]:
                    self.execute(statement)
                self.execute(f"INSERT INTO {SCHEMA_TABLE} (version) VALUES (?)", (version,))
            have = {d[0] for d in self.execute("SELECT * FROM history_samples WHERE 1 = 0").description}
            for statement in catalogue_columns(have):
                self.execute(statement)

    def version(self) -> int:
        return int(self.rows(f"SELECT COALESCE(MAX(version), 0) FROM {SCHEMA_TABLE}")[0][0])

    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        try:
            yield
        except HistoryUnavailable:
            raise
        except Exception as e:
            if not _is_db_error(e):
                raise
            raise HistoryUnavailable(f"cannot {doing} the results database: {_first_line(e)}",
                                     where=self.where, fix=_FIX[self.dialect]) from e  # fmt: skip


@contextmanager
def opened(target: str, create: bool = True) -> Iterator[Database]:
    """The database `target` (resolve()'s), open for the block, closed after (`create`: Database.open's)."""
    db = Database.open(target, create)
    try:
        yield db
    finally:
        db.close()


def _first_line(e: BaseException) -> str:
    return redact((str(e).strip().splitlines() or [type(e).__name__])[0])


def _is_db_error(e: BaseException) -> bool:
    if isinstance(e, (sqlite3.Error, OSError)):
        return True
    psycopg = _psycopg_if_loaded()
    return psycopg is not None and isinstance(e, psycopg.Error)


def _psycopg_if_loaded() -> Any:
    import sys

    return sys.modules.get("psycopg")


def _connect_sqlite(path: Path, where: str, create: bool) -> sqlite3.Connection:
    if not create and not path.is_file():
        raise ConfigError(
            f"there is no results database at {path}" + (" (it would be a folder)" if path.is_dir() else ""),
            where=where,
            fix=f"check the path (--db, else ${ENV}, else {default_path()}); a run records itself at its end "
            "(`edgefarm run --db PATH`), `edgefarm history import runs/ --db PATH` creates one from run folders",
        )
    try:
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: the module opens no transaction of its own; Database.transaction does
        uri = f"file:{quote(str(path.resolve()))}?mode={'rwc' if create else 'rw'}"
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        conn.execute("PRAGMA foreign_keys = ON")
        return conn
    except (sqlite3.Error, OSError) as e:
        raise HistoryUnavailable(f"cannot open the results database: {_first_line(e)}", where=where,
                                 fix=_FIX["sqlite"]) from e  # fmt: skip


def _connect_postgres(url: str, where: str) -> Any:
    try:
        import psycopg
    except ImportError as e:
        raise HistoryUnavailable(
            "a PostgreSQL results database needs psycopg, which is not installed",
            where=where,
            fix="pip install 'edgefarm[postgres]', or use a SQLite file (--db PATH)",
        ) from e
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    except psycopg.Error as e:
        raise HistoryUnavailable(f"cannot connect to the results database: {_first_line(e)}", where=where,
                                 fix=_FIX["postgresql"]) from e  # fmt: skip
    try:  # every statement of this session: bounded waits for locks, bounded run time
        conn.execute(f"SET lock_timeout = '{int(LOCK_TIMEOUT_S * 1000)}ms'")
        conn.execute(f"SET statement_timeout = '{int(STATEMENT_TIMEOUT_S * 1000)}ms'")
    except psycopg.Error as e:
        conn.close()
        raise HistoryUnavailable(f"cannot set up the results database session: {_first_line(e)}", where=where,
                                 fix=_FIX["postgresql"]) from e  # fmt: skip
    return conn
