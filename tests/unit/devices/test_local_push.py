"""This host as a device: a push is a hard link when it can be, a copy otherwise, and never twice."""

import os
import tempfile
from pathlib import Path, PurePosixPath

import pytest

from orchestrator.devices.local import LocalDevice


def _tree(root: Path) -> Path:
    (root / "media").mkdir(parents=True)
    for i in range(3):
        (root / "media" / f"{i}.png").write_bytes(bytes([i]) * 100)
    (root / "job.jsonl").write_text('{"id": "a"}\n')
    return root


def test_a_first_push_links_each_file_and_a_second_skips_them(tmp_path: Path):
    src = _tree(tmp_path / "bundle")
    dev = LocalDevice(workdir=tmp_path / "work")
    dst = PurePosixPath(str(tmp_path / "work" / "runs" / "r1" / "job"))
    first = dev.push(src, dst)
    assert (first.files, first.files_skipped, first.bytes_sent) == (4, 0, 300 + 12)
    for f in src.rglob("*"):
        if f.is_file():
            there = Path(str(dst)) / f.relative_to(src)
            assert os.path.samefile(f, there) and there.read_bytes() == f.read_bytes()
    again = dev.push(src, dst)
    assert (again.files, again.files_skipped) == (0, 4)


def test_a_different_file_at_the_destination_is_replaced_by_the_source(tmp_path: Path):
    src = tmp_path / "model.litertlm"
    src.write_bytes(b"new model")
    dst = tmp_path / "work" / "models" / "model.litertlm"
    dst.parent.mkdir(parents=True)
    dst.write_bytes(b"old model")  # same name, other bytes: a copy, never trusted
    stats = LocalDevice(workdir=tmp_path / "work").push(src, PurePosixPath(str(dst)))
    assert stats.files == 1 and dst.read_bytes() == b"new model"


def test_another_file_system_gets_a_copy(tmp_path: Path):
    shm = Path("/dev/shm")
    if not shm.is_dir() or os.stat(shm).st_dev == os.stat(tmp_path).st_dev:
        pytest.fail("this test needs /dev/shm on a file system other than the temp folder's")
    src = _tree(tmp_path / "bundle")
    with tempfile.TemporaryDirectory(dir=shm) as other:
        dst = PurePosixPath(other) / "job"
        stats = LocalDevice(workdir=Path(other)).push(src, dst)
        assert stats.files == 4
        copy = Path(str(dst)) / "media" / "0.png"
        assert not os.path.samefile(copy, src / "media" / "0.png") and copy.read_bytes() == bytes([0]) * 100


def test_this_hosts_work_folder_is_in_edgefarms_cache_unless_devices_yaml_names_one(tmp_path, monkeypatch):
    monkeypatch.setenv("EDGEFARM_CACHE_DIR", str(tmp_path / "cache"))
    assert LocalDevice().workdir == PurePosixPath(str(tmp_path / "cache" / "local"))
    assert LocalDevice.from_entry({"name": "h", "kind": "local"}).workdir == LocalDevice().workdir
    named = LocalDevice.from_entry({"name": "h", "kind": "local", "workdir": str(tmp_path / "w")})
    assert named.workdir == PurePosixPath(str(tmp_path / "w"))
    monkeypatch.delenv("EDGEFARM_CACHE_DIR")
    assert LocalDevice().workdir == PurePosixPath(str(Path("~/.cache/edgefarm/local").expanduser()))
