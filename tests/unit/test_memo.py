"""Kept check outcomes hold exactly while what they depend on is unchanged."""

import os
from pathlib import Path

import pytest

from orchestrator import memo as memo_module
from orchestrator.datasets import BUNDLED_DATASET, load_dataset
from orchestrator.memo import Memo


@pytest.fixture
def cache(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("EDGEFARM_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "memo"


def test_an_entry_holds_until_a_file_it_depends_on_changes(tmp_path: Path, cache: Path):
    (tmp_path / "data").mkdir()
    f = tmp_path / "data" / "rows.jsonl"
    f.write_text("a\n")
    m = Memo("t")
    m.put({"k": 1}, [f, f.parent], "checked")
    assert m.get({"k": 1}) == "checked" and m.get({"k": 2}) is None
    os.link(f, tmp_path / "linked.jsonl")  # a hard link (staging makes them) changes nothing
    assert m.get({"k": 1}) == "checked"
    st = f.stat()
    with open(f, "r+") as h:  # same size, same inode, a new mtime
        h.write("b")
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    assert m.get({"k": 1}) is None


def test_a_new_file_in_a_folder_it_depends_on_is_a_miss(tmp_path: Path, cache: Path):
    (tmp_path / "data").mkdir()
    m = Memo("t")
    m.put("k", [tmp_path / "data"], 1)
    assert m.get("k") == 1
    (tmp_path / "data" / "new.png").write_bytes(b"x")
    assert m.get("k") is None


def test_a_damaged_entry_is_a_miss_and_old_entries_are_pruned(tmp_path: Path, cache: Path, monkeypatch):
    m = Memo("t")
    m.put("k", [], 1)
    (entry,) = (cache / "t").glob("*.pickle")
    entry.write_bytes(b"not a pickle")
    assert m.get("k") is None
    monkeypatch.setattr(Memo, "MAX_ENTRIES", 3)
    for i in range(5):
        m.put(f"k{i}", [], i)
    assert len(list((cache / "t").glob("*.pickle"))) == 3 and m.get("k4") == 4


def test_a_second_load_of_an_unchanged_dataset_runs_no_row_check(cache: Path, monkeypatch):
    first = load_dataset(str(BUNDLED_DATASET))
    from orchestrator.datasets import edgemmeval

    monkeypatch.setattr(edgemmeval, "row_to_sample", lambda *a, **k: pytest.fail("rows checked again"))
    assert load_dataset(str(BUNDLED_DATASET)) == first


def test_a_dataset_with_problems_is_checked_every_time(tmp_path: Path, cache: Path):
    rows = tmp_path / "ds" / "data" / "test" / "metadata.jsonl"
    rows.parent.mkdir(parents=True)
    rows.write_text('{"test_id": "T1", "modality": "image", "prompt": "what?", "reference": "x"}\n')
    assert load_dataset(str(tmp_path / "ds")).problems
    assert not list(cache.glob("datasets/*.pickle"))
    assert load_dataset(str(tmp_path / "ds")).problems


def test_an_inventory_that_passed_is_not_validated_again_but_a_broken_one_always_is(
    tmp_path: Path, cache: Path
):
    from orchestrator.inventory import load_inventory

    good = tmp_path / "devices.yaml"
    good.write_text("devices:\n  - {name: here, kind: local}\n")
    assert load_inventory(good).entries
    assert len(list((cache / "inventories").glob("*.pickle"))) == 1
    bad = tmp_path / "bad.yaml"
    bad.write_text("devices:\n  - {name: here, kind: toaster}\n")
    for _ in range(2):
        with pytest.raises(Exception, match="bad.yaml:2"):
            load_inventory(bad)
    assert len(list((cache / "inventories").glob("*.pickle"))) == 1


def test_code_signature_covers_the_loaders():
    sig = memo_module.code_signature("datasets/*.py")
    assert any(p.endswith("edgemmeval.py") for p, _ in sig)
