"""The Python runner's answer rule (android_runner/answer_text.py) THROUGH android_runner/litert_runner.py,
against what the native runner makes of the same bytes (its sanitizer build over the fake runtime,
tests/unit/native/fake_litert_lm.c, read by the host as a phone's row is: android_native.line_row, then with_snapshots).

The tiny model cannot be made to emit invalid UTF-8 or a 1 MiB answer, so the runtime's text is handed
to the narrowest seam where it enters the Python runner's row: LiteRtRunner._finish, the real method of a
runner holding the real engine of the tiny model (one real sample runs first, through run())."""

from __future__ import annotations

import json
import os
import time

import pytest
from test_native_runner import job, run  # this folder is on sys.path (no __init__.py: rootdir imports)

from android_runner.answer_text import clean_answer
from android_runner.contract import OUTPUT_MAX_BYTES, JobItem, JobPart
from android_runner.conversation import reply_text
from android_runner.litert_runner import LiteRtRunner, StderrLog
from android_runner.memory import MemorySampler
from android_runner.status import Status
from orchestrator.models import BUNDLED_MODEL
from orchestrator.runners.android_native import line_row, with_snapshots
from orchestrator.runners.base import RunOptions

# the fake runtime's @badutf8 answer (fake_litert_lm.c): a lone 0xff, a cut 3-byte sequence, a surrogate
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
    opts = RunOptions(run_id="r")
    return with_snapshots(line_row(rows[0], "S", opts), rows[0], opts, {})


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


CAP = OUTPUT_MAX_BYTES
# (the fake runtime's answer as @pad=N,PRE,POST: PRE, N 'a's, POST), the answer as the row keeps it,
# invalid_utf8_bytes, output_truncated_bytes: figures worked out by hand from answer_text.py's rule
# (replace invalid UTF-8 over the whole answer, then keep its first CAP bytes of UTF-8, whole characters)
OVER_THE_CAP = {
    "10 MB": ((10 * 2**20, b"", b""), "a" * CAP, 0, 10 * 2**20 - CAP),
    # é (2 bytes) straddles the cut: it goes whole, with the z after it
    "1 MiB + a split 2-byte character": ((CAP - 1, b"", "éz".encode()), "a" * (CAP - 1), 0, 2 + 1),
    # a 4-byte character 2 bytes before the cut
    "1 MiB + a split 4-byte character": ((CAP - 2, b"", "\U0001f600".encode()), "a" * (CAP - 2), 0, 4),
    # the lone 0xff first is 3 bytes once replaced (CAP - 1 kept so far), so the U+FFFD of the cut
    # sequence e2 82 no longer fits: the cut; the invalid bytes past it are counted too (1 + 2 + 3 + 1)
    # and dropped as the U+FFFDs they became (3, 3 * 3 for ed a0 80, then é and one more)
    "invalid UTF-8 + over the cap": (
        (CAP - 4, b"\xff", b"\xe2\x82\xed\xa0\x80\xc3\xa9\xff"),
        "\ufffd" + "a" * (CAP - 4),
        1 + 2 + 3 + 1,
        3 + 3 * 3 + 2 + 3,
    ),
}


@pytest.mark.parametrize("case", list(OVER_THE_CAP))
def test_an_answer_over_the_cap_reads_the_same_on_both_runners(python_runner, native_build, tmp_path, case):
    """The same bytes over the cap: the same text, invalid_utf8_bytes and output_truncated_bytes from the
    Python runner (the answer cleaned by answer_text.py) and the native runner (edgefarm_runner.c, which
    caps the answer text it took out of the runtime's reply, not the reply)."""
    (n, pre, post), text, invalid, dropped = OVER_THE_CAP[case]
    native = native_row(native_build, tmp_path, f"@pad={n},{pre.hex()},{post.hex()}")
    answer = pre + b"a" * n + post
    py = python_row(python_runner, answer if invalid else answer.decode())
    assert py.status == native.status == Status.OK, (py.error, native.error)
    assert len(py.output.encode()) <= CAP and len(native.output.encode()) <= CAP
    got = [(r.output == text, r.invalid_utf8_bytes, r.output_truncated_bytes) for r in (py, native)]
    assert got == [(True, invalid, dropped)] * 2, (case, got)


# A reply in the runtime's JSON with escapes (nlohmann writes raw UTF-8, but the JSON allows these): the
# native runner decodes them as Python's json.loads does before the rule, a lone surrogate being invalid
ESCAPED_REPLY = (
    b'{"role":"assistant","content":[{"type":"text","text":"caf\\u00e9 \\ud83d\\ude00 \\ud800 \\"q\\"\\n"},'
    b'{"type":"image","path":"/x.png"},{"text":"!","type":"text"}]}'
)


def test_json_escapes_in_the_reply_read_the_same_on_both_runners(python_runner, native_build, tmp_path):
    native = native_row(native_build, tmp_path, f"@raw={ESCAPED_REPLY.hex()}")
    py = python_row(python_runner, reply_text(json.loads(ESCAPED_REPLY)))  # the Python runner's extraction
    expected = 'café \U0001f600 \ufffd\ufffd\ufffd "q"\n!'
    assert (py.output, py.invalid_utf8_bytes, py.output_truncated_bytes) == (expected, 3, 0)
    assert (native.output, native.invalid_utf8_bytes, native.output_truncated_bytes) == (expected, 3, 0)


# Replies of other shapes, hostile ones included: the native runner's row must read as the Python runner's
# rule reads the same reply (json.loads, reply_text, answer_text.py); a reply that is not JSON is an error
SHAPES = {
    "content a string": b'{"role":"assistant","content":"plain \\u00e9\\t"}',
    "no content": b'{"role":"assistant"}',
    "a key twice: the last": b'{"content":"first","content":"second"}',
    "type twice: the last": b'{"content":[{"type":"text","text":"a","type":"image"},{"type":"text","text":"b"}]}',
    "escaped key and type": b'{"c\\u006fntent":[{"\\u0074ype":"t\\u0065xt","text":"k"}]}',
    "empty tool_calls": b'{"content":"t","tool_calls":[ ]}',
    "a tool call": b'{"role":"assistant","content":[],"tool_calls":[{"function":{"name":"f","arguments":{"x":1}}}]}',
    "surrogates the wrong way round": b'{"content":"\\udc00\\ud800!"}',
    "a raw control character": b'{"content":"a\x01b"}',
    "more after the object": b'{"content":"x"} {}',
    "a cut escape": b'{"content":"a\\u00',
    "a lone backslash": b'{"content":"a\\',
    "not an object": b'["content"]',
    "a number part": b'{"content":[1,{"type":"text","text":"x"}]}',
    "a text that is a number": b'{"content":[{"type":"text","text":5}]}',
    "bad number": b'{"content":"x","n":01}',
    "empty": b"",
}


def python_rule(reply: bytes) -> tuple[str, str, int, int]:
    try:
        # an empty reply is {} for the Python runner (litert_lm/conversation.py)
        text = reply_text(json.loads(reply) if reply else {})
    except (ValueError, TypeError, AttributeError):
        return Status.ERROR, "", 0, 0
    return Status.OK, *clean_answer(text)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_reply_of_any_shape_reads_as_the_python_rule_reads_it(native_build, tmp_path, shape):
    native = native_row(native_build, tmp_path, f"@raw={SHAPES[shape].hex()}")
    got = (native.status, native.output, native.invalid_utf8_bytes, native.output_truncated_bytes)
    assert got == python_rule(SHAPES[shape]), native.error
