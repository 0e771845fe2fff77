"""The history lab: a real PostgreSQL server for the module that asks for it (postgres.py)."""

from __future__ import annotations

import pytest

from .postgres import binaries, running_server


@pytest.fixture(scope="module")
def postgres():
    if binaries() is None:
        print("PostgreSQL binaries absent (apt-get install postgresql): PostgreSQL history tests skipped")
        pytest.skip("PostgreSQL binaries absent: apt-get install postgresql (scripts/test.sh installs it)")
    with running_server() as server:
        yield server
