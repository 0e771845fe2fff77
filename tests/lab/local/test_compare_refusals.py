"""Issue 41: `edgefarm compare` refuses a run against itself and a run.json layout it does not know, and
names a version difference, through the real CLI on one real run of the tiny model.

Before: `compare RUN RUN` printed a full table of 1.00x and exited 0; a run.json edited to
`schema_version: 999` or to edgefarm 9.9.9 was compared without a word."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from .conftest import edgefarm, only_run_dir


def _edited(src: Path, dest: Path, run_id: str, **changes) -> Path:
    """A copy of run `src` as another run (`run_id`), its run.json changed by `changes`."""
    shutil.copytree(src, dest)
    run = json.loads((dest / "run.json").read_text())
    run["run_id"] = run_id
    for key, value in changes.items():
        if isinstance(value, dict):
            run[key] = {**run.get(key, {}), **value}
        else:
            run[key] = value
    (dest / "run.json").write_text(json.dumps(run))
    return dest


def _refused(p, *said: str) -> str:
    text = " ".join(p.stderr.split())
    assert p.returncode == 2, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and "fix:" in text and not p.stdout.strip(), p.stdout + p.stderr
    for s in said:
        assert s in text, text
    return text


def test_compare_refuses_itself_and_a_foreign_schema_and_names_a_version_difference(tmp_path: Path):
    inv = tmp_path / "devices.yaml"
    inv.write_text(json.dumps({"devices": [{"name": "this-host", "kind": "local", "workdir": str(tmp_path / "w")}]}))
    made = edgefarm("run", "--devices", "local", "--inventory", str(inv), "--out", str(tmp_path / "runs"),
                    "--modality", "text", "--limit", "3", "--max-output-tokens", "8")  # fmt: skip
    run = only_run_dir(tmp_path / "runs")
    assert made.returncode == 0 and run is not None, made.stderr[-3000:]

    # the same folder twice (also through another spelling of its path), and a copy of it: one run
    _refused(edgefarm("compare", str(run), str(run)), "A and B are the same folder", "edgefarm ab")
    _refused(edgefarm("compare", str(run), str(run / ".." / run.name)), "the same folder")
    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    _refused(edgefarm("compare", str(run), str(copy)), f"A and B are the same run ({run.name})", "edgefarm ab")

    # a layout this edgefarm does not read: refused naming the file, the field and what it reads
    foreign = _edited(run, tmp_path / "foreign", "20990101-000000-beef", schema_version=999)
    for args in ((str(run), str(foreign)), (str(foreign), str(run))):
        _refused(edgefarm("compare", *args), f"{foreign / 'run.json'} field 'schema_version'",
                 "schema_version 999 is not a run.json layout this edgefarm reads (it reads schema_version 1)")  # fmt: skip
    _refused(edgefarm("report", str(foreign)), "field 'schema_version'")  # every reader of run.json

    # another edgefarm version: compared, the difference named in every format
    newer = _edited(run, tmp_path / "newer", "20990101-000001-beef", versions={"edgefarm": "9.9.9"})
    ours = json.loads((run / "run.json").read_text())["versions"]["edgefarm"]
    said = f"edgefarm {ours} in {run.name}, 9.9.9 in 20990101-000001-beef"
    term = edgefarm("compare", str(run), str(newer))
    assert term.returncode == 0, term.stderr
    assert f"VERSIONS DIFFER: {said}" in " ".join(term.stdout.split()), term.stdout
    # what two runs cannot tell, and where to go instead
    assert "cannot measure it" in " ".join(term.stdout.split()) and "edgefarm ab" in term.stdout
    as_json = json.loads(edgefarm("compare", str(run), str(newer), "--format", "json").stdout)
    assert as_json["versions_differ"] == [said]
    assert f"**Versions differ:** {said}" in edgefarm("compare", str(run), str(newer), "--format", "md").stdout
