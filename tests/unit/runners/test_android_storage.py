"""The notes the phone's runner and driver print when the storage refuses a write are the ones the host
stops the device on (orchestrator/runners/android_storage.py): read from their sources, so a reworded
note cannot silently turn the detection off."""

from __future__ import annotations

import re

from orchestrator.bundled import REPO_ROOT
from orchestrator.runners.android_storage import refused_sample, refused_write

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
