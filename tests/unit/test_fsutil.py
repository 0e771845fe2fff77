"""Output files: written atomically, with the mode the umask gives (not mkstemp's 0600), and every
OSError an OutputError naming the path and the fix (issue 10)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.errors import OutputError
from orchestrator.fsutil import make_new_dir, write_json_atomic, write_text_atomic

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("umask, mode", [(0o002, 0o664), (0o022, 0o644), (0o077, 0o600)])
def test_atomic_writes_follow_the_umask(tmp_path: Path, umask: int, mode: int):
    target = tmp_path / "report.json"
    code = (
        "import os, sys; os.umask(int(sys.argv[2], 8)); from pathlib import Path; "
        "from orchestrator.fsutil import UMASK, write_json_atomic; "
        "assert UMASK == int(sys.argv[2], 8), oct(UMASK); write_json_atomic(Path(sys.argv[1]), {'a': 1})"
    )
    subprocess.run([sys.executable, "-c", code, str(target), oct(umask)[2:]], check=True, cwd=REPO)
    assert stat.S_IMODE(target.stat().st_mode) == mode
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no temp file left


def test_a_path_under_a_regular_file_is_an_output_error(tmp_path: Path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError) as e:
        write_text_atomic(tmp_path / "file" / "runs" / "report.md", "x")
    assert e.value.exit_code == 5
    assert "a part of the path is a file" in e.value.what and str(tmp_path / "file") in e.value.where
    assert "--out" in e.value.fix


def test_a_folder_in_the_way_of_a_file_is_an_output_error_and_leaves_no_temp(tmp_path: Path):
    (tmp_path / "report.json").mkdir()
    with pytest.raises(OutputError):
        write_json_atomic(tmp_path / "report.json", {"a": 1})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_make_new_dir_says_when_the_name_is_taken(tmp_path: Path):
    assert make_new_dir(tmp_path / "runs" / "a") is True
    assert make_new_dir(tmp_path / "runs" / "a") is False
    (tmp_path / "f").write_text("")
    with pytest.raises(OutputError):
        make_new_dir(tmp_path / "f" / "a")


def test_umask_is_read_without_changing_it():
    before = os.umask(0o022)
    os.umask(before)
    from orchestrator import fsutil

    assert fsutil._read_umask() == before
    now = os.umask(0o022)
    os.umask(now)
    assert now == before
