"""Host file hashes: computed once per content, across runs for big files, never trusted after a change."""

import json
import os
from pathlib import Path

from orchestrator.devices import files
from orchestrator.devices.files import cached_sha256, sha256_file


def _fresh(monkeypatch, tmp_path: Path) -> Path:
    """A new process with its cache folder under tmp_path; returns the folder of the kept hashes."""
    monkeypatch.setenv("EDGEFARM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(files, "_cache", {})
    return tmp_path / "cache" / "sha256"


def test_a_big_file_is_hashed_once_across_processes(tmp_path: Path, monkeypatch):
    big = tmp_path / "model.bin"
    big.write_bytes(os.urandom(files.PERSIST_MIN_BYTES))
    kept = _fresh(monkeypatch, tmp_path)
    digest = cached_sha256(big)
    assert digest == sha256_file(big) and len(list(kept.glob("*.json"))) == 1
    _fresh(monkeypatch, tmp_path)  # the next run reads the store instead of the file
    monkeypatch.setattr(files, "sha256_file", lambda p: (_ for _ in ()).throw(AssertionError("hashed again")))
    assert cached_sha256(big) == digest


def test_a_file_rewritten_in_place_is_hashed_again_and_a_new_hard_link_changes_nothing(
    tmp_path: Path, monkeypatch
):
    big = tmp_path / "model.bin"
    big.write_bytes(b"a" * files.PERSIST_MIN_BYTES)
    _fresh(monkeypatch, tmp_path)
    old = cached_sha256(big)
    os.link(big, tmp_path / "linked.bin")  # as staging does: the inode's ctime changes, its bytes do not
    _fresh(monkeypatch, tmp_path)
    monkeypatch.setattr(files, "sha256_file", lambda p: (_ for _ in ()).throw(AssertionError("hashed again")))
    assert cached_sha256(big) == old
    monkeypatch.undo()
    _fresh(monkeypatch, tmp_path)
    st = big.stat()
    with open(big, "r+b") as f:  # same size, same inode, a new mtime
        f.write(b"b")
    os.utime(big, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    assert cached_sha256(big) == sha256_file(big) != old


def test_a_damaged_entry_is_hashed_again(tmp_path: Path, monkeypatch):
    big = tmp_path / "model.bin"
    big.write_bytes(b"x" * files.PERSIST_MIN_BYTES)
    kept = _fresh(monkeypatch, tmp_path)
    cached_sha256(big)
    (entry,) = kept.glob("*.json")
    entry.write_text("{not json")
    _fresh(monkeypatch, tmp_path)
    assert cached_sha256(big) == sha256_file(big)
    assert json.loads(entry.read_text())["sha256"] == sha256_file(big)  # rewritten with the new entry


def test_small_files_stay_out_of_the_store(tmp_path: Path, monkeypatch):
    small = tmp_path / "a.png"
    small.write_bytes(b"png")
    kept = _fresh(monkeypatch, tmp_path)
    cached_sha256(small)
    assert not kept.exists()


def test_hard_links_of_one_file_are_hashed_once(tmp_path: Path, monkeypatch):
    original = tmp_path / "a.png"
    original.write_bytes(b"pixels")
    links = [tmp_path / f"device-{i}.png" for i in range(3)]
    for link in links:
        os.link(original, link)
    _fresh(monkeypatch, tmp_path)
    calls = []
    real = files.sha256_file
    monkeypatch.setattr(files, "sha256_file", lambda p: calls.append(p) or real(p))
    assert {cached_sha256(p) for p in [original, *links]} == {real(original)}
    assert len(calls) == 1
