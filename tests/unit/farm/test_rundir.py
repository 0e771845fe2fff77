"""run.json's reader (farm/rundir.py) refuses a layout it does not know (issue 41): the file, the field and the versions
it reads are named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.errors import ConfigError
from orchestrator.farm.run_json import KNOWN_SCHEMAS, SCHEMA_VERSION
from orchestrator.farm.rundir import read_run_json

RUN_ID = "20260101-120000-abcd"


def _folder(tmp_path: Path, **fields) -> Path:
    run = {"schema_version": SCHEMA_VERSION, "run_id": RUN_ID, "versions": {"edgefarm": "9.9.9"}} | fields
    (tmp_path / "run.json").write_text(json.dumps({k: v for k, v in run.items() if v is not ...}))
    return tmp_path


@pytest.mark.parametrize("schema", [999, 0, "1", None, True, [1]])
def test_a_schema_it_does_not_know_is_refused_naming_file_field_and_known_versions(tmp_path: Path, schema):
    with pytest.raises(ConfigError) as e:
        read_run_json(_folder(tmp_path, schema_version=schema))
    said = str(e.value)
    assert e.value.exit_code == 2
    assert f"{tmp_path / 'run.json'} field 'schema_version'" in said
    assert f"reads schema_version {', '.join(map(str, KNOWN_SCHEMAS))}" in said
    assert "edgefarm 9.9.9" in said  # the fix names the edgefarm that wrote it


def test_every_known_schema_and_an_older_file_without_one_are_read(tmp_path: Path):
    for schema in KNOWN_SCHEMAS:
        assert read_run_json(_folder(tmp_path, schema_version=schema))["run_id"] == RUN_ID
    assert read_run_json(_folder(tmp_path, schema_version=...))["run_id"] == RUN_ID
