"""Progress without a terminal (CI, nohup, a pipe): plain lines per device, no bars, no colour codes."""

from __future__ import annotations

import re


def test_piped_stderr_gets_plain_progress_lines(run_here):
    p, _ = run_here("--per-modality", "1", "--max-output-tokens", "8")
    assert p.returncode == 0, p.stderr
    assert re.search(
        r"^this-host\s+7/7 samples \(ok \d+, failed \d+\) [\d.]+ samples/s, done$", p.stderr, re.MULTILINE
    ), p.stderr
    assert "\x1b[" not in p.stderr and "━" not in p.stderr  # no bar redrawn into a log
