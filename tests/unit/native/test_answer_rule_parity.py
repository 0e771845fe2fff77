"""The Python runner's answer rule (android_runner/answer_text.py) THROUGH android_runner/litert_runner.py,
against what the native runner makes of the same bytes (its sanitizer build over the fake runtime,
tests/unit/native/fake_litert_lm.c, read by the host as a phone's row is: android_native.result_from_line).

The tiny model cannot be made to emit invalid UTF-8 or a 1 MiB answer, so the runtime's text is handed
to the narrowest seam where it enters the Python runner's row: LiteRtRunner._finish, the real method of a
runner holding the real engine of the tiny model (one real sample runs first, through run())."""

from __future__ import annotations

import os
import time

import pytest
from test_native_runner import job, run  # this folder is on sys.path (no __init__.py: rootdir imports)

from android_runner.contract import OUTPUT_MAX_BYTES, JobItem, JobPart
from android_runner.litert_runner import LiteRtRunner, StderrLog
from android_runner.memory import MemorySampler
from android_runner.status import Status
from orchestrator.models import BUNDLED_MODEL
from orchestrator.runners.android_native import result_from_line
from orchestrator.runners.base import RunOptions

# the fake runtime's @badutf8 answer (fake_litert_lm.c): a lone 0xff, a cut 3-byte sequence, a surrogate
REPLY_HEAD = (
    '{"role":"assistant","content":[{"type":"text","text":"'  # the runtime's text reply (fake_litert_lm.c)
)
BAD_UTF8 = b"ok \xff then \xe2\x82 cut, \xed\xa0\x80 surrogate, \xc3\xa9 fine"


@pytest.fixture(scope="module")
def python_runner(tmp_path_factory):
    assert BUNDLED_MODEL.is_file(), f"the tiny model is missing at {BUNDLED_MODEL}: build it with scripts/"
    runner = LiteRtRunner(str(BUNDLED_MODEL), "cpu", None, ":nocache", None, frozenset({"text"}))
    log_path = tmp_path_factory.mktemp("py-runner") / "stderr.log"
    log_path.write_text("")
    memory = MemorySampler()
    memory.start()
    item = JobItem(id="real", turns=((JobPart(kind="text", text="Hello"),),), max_output_tokens=4)
    saved = os.dup(2)  # StderrLog moves fd 2 to its file, as the runner process does: put it back after
    try:
        real = runner.run(item, memory, StderrLog(log_path))  # the real path, end to end, on the tiny model
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    assert real.status == Status.OK and (real.invalid_utf8_bytes, real.output_truncated_bytes) == (0, 0), real
    yield runner, memory
    memory.stop()


def python_row(python_runner, text):
    runner, memory = python_runner
    row = {"id": "S", "status": Status.OK, "backend_requested": "cpu", "runner": "python"}
    return runner._finish(row, text, [], None, 0.0, time.perf_counter(), memory)


def native_row(native_build, tmp_path, prompt: str):
    rc, _lines, rows, _ = run(native_build, tmp_path, job(prompt))
    assert rc == 0 and len(rows) == 1, rows
    return result_from_line(rows[0], "S", RunOptions(run_id="r"), {})


@pytest.mark.parametrize("form", ["bytes", "surrogateescape"])
def test_invalid_utf8_gives_the_same_row_fields_as_the_native_runner(
    python_runner, native_build, tmp_path, form
):
    native = native_row(native_build, tmp_path, "@badutf8")
    text = BAD_UTF8 if form == "bytes" else BAD_UTF8.decode("utf-8", "surrogateescape")  # a binding's str
    py = python_row(python_runner, text)
    assert py.status == native.status == Status.OK
    assert py.output == native.output == BAD_UTF8.decode("utf-8", "replace")  # each invalid subpart -> U+FFFD
    assert py.invalid_utf8_bytes == native.invalid_utf8_bytes == 1 + 2 + 3
    assert py.output_truncated_bytes == native.output_truncated_bytes == 0


def test_an_answer_over_the_cap_is_cut_and_marked_by_both_runners(python_runner, native_build, tmp_path):
    """Both cut and mark a 2 MiB answer, but NOT to the same figures: the Python runner caps the answer
    text at OUTPUT_MAX_BYTES; the native runner caps the runtime's whole JSON reply there, so it keeps
    the text minus the reply's head and counts the reply's closing `"}]}` among the dropped bytes
    (edgefarm_runner.c; a known difference, left to the native runner's owner)."""
    size = 2 * OUTPUT_MAX_BYTES
    native = native_row(native_build, tmp_path, f"@big={size}")
    py = python_row(python_runner, "a" * size)
    assert py.status == native.status == Status.OK
    assert py.output == "a" * OUTPUT_MAX_BYTES and py.output_truncated_bytes == size - OUTPUT_MAX_BYTES
    kept = len(native.output.encode())
    assert native.output == "a" * kept and kept == OUTPUT_MAX_BYTES - len(REPLY_HEAD)
    assert native.output_truncated_bytes == size - kept + len('"}]}')
