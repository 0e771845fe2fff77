"""`edgefarm dataset check`: counts per modality, every problem, exit 0 only when valid."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from orchestrator.cli import main
from orchestrator.datasets import BUNDLED_DATASET

ROWS = [
    {"test_id": "TXT-001", "modality": "text", "task": "qa", "prompt": "2+2?", "reference": "4"},
    {
        "test_id": "TXT-002",
        "modality": "text",
        "task": "qa",
        "prompt": "[image:/x] is text",
        "reference": "ok",
    },
    {
        "test_id": "AUD-001",
        "modality": "audio",
        "task": "transcription",
        "prompt": "Transcribe.",
        "audio": ["audio/a.wav"],
        "reference": "hello",
    },
]
BROKEN = [
    {
        "test_id": "IMG-001",
        "modality": "image",
        "task": "vqa",
        "prompt": "What?",
        "images": ["../../x.png"],
        "reference": "x",
    },
    {
        "test_id": "STO-001",
        "modality": "structured_output",
        "task": "regex",
        "prompt": "P",
        "constraint_type": "regex",
        "pattern": "[",
        "reference": "x",
    },
]


def write(root: Path, rows: list[dict]) -> Path:
    folder = root / "data" / "test"
    (folder / "audio").mkdir(parents=True)
    (folder / "audio" / "a.wav").write_bytes(b"RIFF")
    (folder / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder / "metadata.jsonl"


def test_valid_dataset_prints_counts_and_exits_0(tmp_path: Path) -> None:
    write(tmp_path / "ds", ROWS)
    result = CliRunner().invoke(main, ["dataset", "check", str(tmp_path / "ds")])
    assert result.exit_code == 0, result.output
    assert (
        "text" in result.output
        and "│       2 │" in result.output
        and "OK: 3 samples, no problems." in result.output
    )


def test_broken_dataset_lists_every_problem_and_exits_2(tmp_path: Path) -> None:
    meta = write(tmp_path / "ds", ROWS + BROKEN)
    result = CliRunner().invoke(main, ["dataset", "check", str(tmp_path / "ds")])
    assert result.exit_code == 2
    assert f"{meta}:4 IMG-001 field 'images[0]': media '../../x.png'" in result.output
    assert f"{meta}:5 STO-001 field 'pattern': not a valid Python regex" in result.output
    assert "2 problem(s)" in result.output


def test_json_output_is_exactly_the_summary(tmp_path: Path) -> None:
    meta = write(tmp_path / "ds", ROWS + BROKEN)
    result = CliRunner().invoke(main, ["dataset", "check", str(meta), "--json", "--format", "edgemmeval"])
    assert result.exit_code == 2
    summary = json.loads(result.output)
    assert list(summary) == ["total", "by_modality", "errors"]
    assert summary["total"] == 3 and summary["by_modality"] == {"text": 2, "audio": 1}
    assert len(summary["errors"]) == 2 and summary["errors"][0].startswith(f"{meta}:4 IMG-001")


def test_unreadable_spec_in_json_mode_still_prints_json(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["dataset", "check", str(tmp_path / "missing"), "--json"])
    assert result.exit_code == 2
    summary = json.loads(result.output)
    assert summary["total"] == 0 and "no such file or folder" in summary["errors"][0]


def test_unknown_format_exits_2_with_suggestion(tmp_path: Path) -> None:
    write(tmp_path / "ds", ROWS)
    result = CliRunner().invoke(main, ["dataset", "check", str(tmp_path / "ds"), "--format", "edgemm"])
    assert result.exit_code == 2 and "Did you mean 'edgemmeval'" in result.output


def test_console_script_checks_a_dataset(tmp_path: Path) -> None:
    # The console script pip installed beside this interpreter (a clean environment has no venv on PATH).
    exe = Path(sys.executable).parent / "edgefarm"
    assert exe.is_file(), f"the edgefarm console script is not installed at {exe} (pip install -e '.[test]')"
    meta = write(tmp_path / "ds", ROWS + BROKEN[:1])
    proc = subprocess.run(
        [str(exe), "dataset", "check", str(tmp_path / "ds"), "--json"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    summary = json.loads(proc.stdout)
    expected = (
        f"{meta}:4 IMG-001 field 'images[0]': media '../../x.png' points outside the dataset folder "
        f"{meta.parent.resolve()} (to {(tmp_path / 'ds' / 'x.png').resolve()}); "
        "copy the file into the dataset folder and name it relative to it"
    )
    assert summary["total"] == 3 and summary["errors"] == [expected]
    proc = subprocess.run(
        [str(exe), "dataset", "check", str(tmp_path / "nope")],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "no such file or folder" in proc.stderr and "fix:" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.skipif(
    not (BUNDLED_DATASET / "data" / "test" / "metadata.jsonl").exists(),
    reason="bundled dataset not built yet",
)
def test_bundled_dataset_checks_clean() -> None:
    result = CliRunner().invoke(main, ["dataset", "check", str(BUNDLED_DATASET), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary == {
        "total": 200,
        "errors": [],
        "by_modality": {
            "image": 34,
            "audio": 27,
            "text": 41,
            "multi_turn": 24,
            "combination": 28,
            "structured_output": 32,
            "tool_call": 14,
        },
    }
