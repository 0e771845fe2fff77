"""load_dataset: local paths in any registered format, hub ids from the cache, clear failure offline."""

from __future__ import annotations

import json
import time
from pathlib import Path

import huggingface_hub.constants
import pytest

from orchestrator.datasets import load_dataset
from orchestrator.errors import DatasetError, UnknownName

ROWS = [
    {"test_id": "TXT-001", "modality": "text", "task": "qa", "prompt": "2+2?", "reference": "4"},
    {
        "test_id": "IMG-001",
        "modality": "image",
        "task": "vqa",
        "prompt": "What?",
        "images": ["images/a.png"],
        "reference": "a square",
    },
]


def write_hub_layout(root: Path, rows: list[dict]) -> Path:
    folder = root / "data" / "test"
    (folder / "images").mkdir(parents=True)
    (folder / "images" / "a.png").write_bytes(b"png")
    (folder / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


def test_local_folder_is_detected_as_edgemmeval(tmp_path: Path) -> None:
    write_hub_layout(tmp_path / "mine", ROWS)
    ds = load_dataset(tmp_path / "mine")
    assert (ds.format, ds.name, len(ds.samples), ds.problems) == ("edgemmeval", "mine", 2, ())
    assert load_dataset(str(tmp_path / "mine"), format="edgemmeval", subset="test").by_modality == {
        "text": 1,
        "image": 1,
    }


def test_unknown_format_name_suggests_the_close_one(tmp_path: Path) -> None:
    write_hub_layout(tmp_path / "mine", ROWS)
    with pytest.raises(UnknownName, match="Did you mean 'edgemmeval'"):
        load_dataset(tmp_path / "mine", format="edgemmevl")


def test_undetectable_folder_lists_known_formats(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "readme.txt").write_text("hi")
    with pytest.raises(
        DatasetError,
        match=r"not in any known dataset format[\s\S]*fix: pass --format with one of:"
        r" .*edgemmeval",
    ):
        load_dataset(tmp_path / "notes")


def test_missing_local_path_that_is_no_hub_id(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no such file or folder"):
        load_dataset(tmp_path / "nope" / "deeper")


def test_hub_id_offline_fails_fast_and_says_what_to_do(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.chdir(tmp_path)  # so the id is not a local path by accident
    started = time.monotonic()
    with pytest.raises(DatasetError) as info:
        load_dataset("CortexSwarm/EdgeMMEval", hub_cache=tmp_path / "cache")
    assert time.monotonic() - started < 20
    text = str(info.value)
    assert (
        "could not be fetched from the Hugging Face Hub" in text
        and info.value.where == "CortexSwarm/EdgeMMEval"
    )
    assert "fix: download it where there is a network" in text and "pass DIR" in text
    assert info.value.exit_code == 2


def test_hub_id_found_in_the_local_cache_loads_offline(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.chdir(tmp_path)
    repo = tmp_path / "cache" / "datasets--CortexSwarm--EdgeMMEval"
    commit = "0123456789abcdef0123456789abcdef01234567"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    write_hub_layout(repo / "snapshots" / commit, ROWS)
    ds = load_dataset("CortexSwarm/EdgeMMEval", hub_cache=tmp_path / "cache")
    assert ds.name == "CortexSwarm/EdgeMMEval" and len(ds.samples) == 2 and ds.problems == ()
    assert ds.root == (repo / "snapshots" / commit / "data" / "test").resolve()


def test_local_path_wins_over_hub_id(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_hub_layout(tmp_path / "CortexSwarm" / "EdgeMMEval", ROWS[:1])
    ds = load_dataset("CortexSwarm/EdgeMMEval")
    assert ds.name == "EdgeMMEval" and [s.id for s in ds.samples] == ["TXT-001"]
