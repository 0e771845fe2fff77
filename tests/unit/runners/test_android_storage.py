"""The notes the phone's runner and driver print when the storage refuses a write are the ones the host
stops the device on (orchestrator/runners/android_storage.py): read from their sources, so a reworded
note cannot silently turn the detection off."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path, PurePosixPath

import pytest

from orchestrator.bundled import REPO_ROOT
from orchestrator.devices.local import LocalDevice
from orchestrator.runners.android_storage import keep_recorded, refused_sample, refused_write

DRIVER = REPO_ROOT / "android_runner" / "driver.sh"
RUNNER = REPO_ROOT / "android_runner" / "native" / "edgefarm_runner.c"


def test_every_refused_write_note_of_the_driver_and_the_runner_is_recognised():
    driver = [
        m.group(1)
        for m in re.finditer(r'echo "EDGEFARM NOTE ([^"]*(?:storage|refused)[^"]*)"', DRIVER.read_text())
    ]
    assert len(driver) >= 3, driver  # snapshots, results file, done.tsv
    assert all(refused_write(n) for n in driver), driver
    runner = RUNNER.read_text()
    assert "the results file refused sample %ld's line (%s)" in runner and "strerror(e)" in runner
    # what the runner prints on a full phone (strerror(ENOSPC) on Android's bionic and glibc alike)
    said = (
        "warning: the results file refused sample 7's line (No space left on device): the RESULT line below"
    )
    assert refused_write(said) and refused_sample(said) == 7
    assert (
        refused_sample("warning: the battery snapshot of sample 12 could not be written (storage full?)")
        == 12
    )
    assert refused_sample("warning: cannot record the model load in loads.tsv (storage full?)") is None


OTHER_NOTES = (
    "runner restarted after exit status 9 on sample 3",
    "warning: no battery temperature readable, --cooldown-c is not applied",
    "stopped an earlier driver (pid 4) and its runner (pid 5) of this job",
)


def test_other_notes_do_not_stop_the_device():
    assert not any(refused_write(n) for n in OTHER_NOTES)


def _done_tsv(tmp_path: Path, lines: list[str]) -> tuple[Path, str]:
    """A done.tsv as the upstream driver appends it, and its text as read back (last newline dropped)."""
    path = tmp_path / "done.tsv"
    path.write_bytes("".join(f"{x}\n" for x in lines).encode())
    return path, "\n".join(lines)


@pytest.mark.parametrize("tool", ["coreutils", "toybox"])
def test_done_tsv_is_cut_back_to_the_kept_samples_after_a_refused_write(tmp_path, tool, monkeypatch):
    """The driver appended sample 3's line after the fill, with the host's stop on its way: the record
    keeps 1 and 2 byte for byte, so `--resume` runs 3 and 4 again instead of taking 3's cut-short files."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    toybox = shutil.which("toybox")
    if tool == "toybox":  # Android's truncate (the lab phones' toybox)
        assert toybox, "toybox is one of the lab's packages (scripts/test.sh installs it)"
        (bin_dir / "truncate").symlink_to(toybox)
    path, text = _done_tsv(tmp_path, ["1\t0\t812", "2\t0\t790", "3\t0\t1503", "4\t0\t1490"])
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    keep_recorded(LocalDevice(workdir=tmp_path / "w"), PurePosixPath(str(path)), text, lambda n: n < 3)
    assert path.read_bytes() == b"1\t0\t812\n2\t0\t790\n"


def test_a_record_with_every_sample_kept_is_left_alone_and_a_torn_line_ends_the_kept_part(tmp_path):
    device = LocalDevice(workdir=tmp_path / "w")
    path, text = _done_tsv(tmp_path, ["1\t0\t812", "2\t0\t790"])
    keep_recorded(device, PurePosixPath(str(path)), text, lambda n: True)
    assert path.read_bytes() == b"1\t0\t812\n2\t0\t790\n"
    path.write_bytes(b"1\t0\t812\n2\t0")  # the fill cut the last append short
    keep_recorded(device, PurePosixPath(str(path)), "1\t0\t812\n2\t0", lambda n: n == 1 or n == 2)
    assert path.read_bytes() == b"1\t0\t812\n2\t0"  # a short line of a kept sample is still its line
    keep_recorded(device, PurePosixPath(str(path)), "1\t0\t812\n\x00\x00", lambda n: True)
    assert path.read_bytes() == b"1\t0\t812\n"


def test_where_truncate_fails_the_record_goes(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "truncate").write_text("#!/bin/sh\necho 'truncate: not found' >&2\nexit 127\n")
    (bin_dir / "truncate").chmod(0o755)
    path, text = _done_tsv(tmp_path, ["1\t0\t812", "2\t0\t790"])
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    keep_recorded(LocalDevice(workdir=tmp_path / "w"), PurePosixPath(str(path)), text, lambda n: n < 2)
    assert not path.exists()  # the resume runs 1 again on the phone; the host records it once
