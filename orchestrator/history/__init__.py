"""The results database: every run recorded (SQLite file or PostgreSQL), read back as trends per
device and configuration, with changes against the last comparable run and stability (docs/history.md)."""
