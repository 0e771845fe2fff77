"""The results database's schema: a numbered list of migrations, applied in order, each once.

SQL written once for SQLite and PostgreSQL: only types and statements both take (TEXT, INTEGER,
BIGINT, DOUBLE PRECISION, composite primary keys, `INSERT ... ON CONFLICT DO NOTHING`), `?` for a
parameter (db.py turns it into psycopg's `%s`). A migration is appended, never edited: a database
records the last version it applied in `history_schema` (docs/history.md).
"""

from __future__ import annotations

from ..catalogue import KEPT, measures

SCHEMA_TABLE = "history_schema"

# version n = MIGRATIONS[n - 1]
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        # one row per run (or bench): its stamp; `record_sha256` tells an unchanged re-import from a
        # resumed run's new record
        """CREATE TABLE history_runs (
            run_id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT NOT NULL,
            folder TEXT NOT NULL,
            host TEXT NOT NULL,
            edgefarm_version TEXT NOT NULL,
            edgefarm_git TEXT NOT NULL,
            model_name TEXT NOT NULL,
            model_sha256 TEXT NOT NULL,
            dataset_path TEXT NOT NULL,
            dataset_sha256 TEXT NOT NULL,
            slice_sha256 TEXT NOT NULL,
            samples INTEGER NOT NULL,
            shape TEXT NOT NULL,
            flags TEXT NOT NULL,
            versions TEXT NOT NULL,
            record_sha256 TEXT NOT NULL
        )""",
        # one row per device of a run: what it ran with; config_key = the comparable configuration
        """CREATE TABLE history_devices (
            run_id TEXT NOT NULL REFERENCES history_runs (run_id) ON DELETE CASCADE,
            device TEXT NOT NULL,
            kind TEXT NOT NULL,
            hardware TEXT NOT NULL,
            soc TEXT NOT NULL,
            backend TEXT NOT NULL,
            runner TEXT NOT NULL,
            runner_sha256 TEXT NOT NULL,
            runtime_version TEXT NOT NULL,
            runtime_sha256 TEXT NOT NULL,
            config TEXT NOT NULL,
            config_key TEXT NOT NULL,
            error TEXT NOT NULL,
            PRIMARY KEY (run_id, device)
        )""",
        "CREATE INDEX history_devices_series ON history_devices (device, config_key)",
        # each figure of a device with its 95% interval
        """CREATE TABLE history_figures (
            run_id TEXT NOT NULL,
            device TEXT NOT NULL,
            figure TEXT NOT NULL,
            value DOUBLE PRECISION,
            lo DOUBLE PRECISION,
            hi DOUBLE PRECISION,
            PRIMARY KEY (run_id, device, figure),
            FOREIGN KEY (run_id, device) REFERENCES history_devices (run_id, device) ON DELETE CASCADE
        )""",
        # each sample on each device: what the paired comparison of two runs needs
        """CREATE TABLE history_samples (
            run_id TEXT NOT NULL,
            device TEXT NOT NULL,
            sample_id TEXT NOT NULL,
            status TEXT NOT NULL,
            passed INTEGER,
            strict_passed INTEGER,
            score DOUBLE PRECISION,
            ttft_ms DOUBLE PRECISION,
            prefill_tps DOUBLE PRECISION,
            decode_tps DOUBLE PRECISION,
            wall_ms DOUBLE PRECISION,
            peak_rss_mb DOUBLE PRECISION,
            energy_j DOUBLE PRECISION,
            output_sha TEXT NOT NULL,
            PRIMARY KEY (run_id, device, sample_id),
            FOREIGN KEY (run_id, device) REFERENCES history_devices (run_id, device) ON DELETE CASCADE
        )""",
    ),
    (
        # v2: what LiteRT-LM's published benchmark table shows beside the speeds, and `edgefarm bench`'s
        # rows (llama-bench's fields, kept whole as JSON; the columns a query filters on beside them)
        "ALTER TABLE history_runs ADD COLUMN model_size_bytes BIGINT",
        "ALTER TABLE history_runs ADD COLUMN quantization TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE history_devices ADD COLUMN context_tokens BIGINT",
        """CREATE TABLE history_bench_rows (
            run_id TEXT NOT NULL REFERENCES history_runs (run_id) ON DELETE CASCADE,
            device TEXT NOT NULL,
            row_index INTEGER NOT NULL,
            test TEXT NOT NULL,
            n_prompt INTEGER,
            n_gen INTEGER,
            n_depth INTEGER,
            avg_ts DOUBLE PRECISION,
            stddev_ts DOUBLE PRECISION,
            fields TEXT NOT NULL,
            PRIMARY KEY (run_id, device, row_index)
        )""",
    ),
    (
        # v3: one name per figure (orchestrator/catalogue.py): the time per sample is the report's
        # `sample_ms_p50` (its value and interval), no longer the history's own `wall_ms_p50`
        "UPDATE history_figures SET figure = 'sample_ms_p50' WHERE figure = 'wall_ms_p50'",
    ),
    (
        # v4: runs someone knows were disturbed (a CPU hog, a phone on a charger): shown, never judged
        # nor judged against (`edgefarm history exclude RUN --why TEXT`); device '' = every device
        """CREATE TABLE history_exclusions (
            run_id TEXT NOT NULL,
            device TEXT NOT NULL,
            why TEXT NOT NULL,
            excluded_at TEXT NOT NULL,
            PRIMARY KEY (run_id, device)
        )""",
    ),
    (
        # v5: the run's conditions (run.json `conditions`, telemetry/conditions.py: this host's load, each
        # device's start), kept whole as JSON ('' for a run that did not record them): `history` names a
        # loaded or hot run beside its figures
        "ALTER TABLE history_runs ADD COLUMN conditions TEXT NOT NULL DEFAULT ''",
    ),
)


def catalogue_columns(existing: set[str]) -> list[str]:
    """A `history_samples` column for each measure the figure catalogue keeps per sample (its KEPT
    view) that the table lacks: a measure added to the catalogue after the last migration gets its
    column when a database is opened (the migrations above made the columns of theirs)."""
    return [f"ALTER TABLE history_samples ADD COLUMN {m.name} DOUBLE PRECISION"
            for m in measures(KEPT) if m.name not in existing]  # fmt: skip
