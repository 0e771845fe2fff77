"""One rendering of a sample into the runtime's conversation, shared by every runner."""

import json

from android_runner.contract import JobItem, JobPart
from android_runner.conversation import (
    Sampler,
    job_file_text,
    render,
    reply_text,
    sampler_of,
    unsupported_reason,
)
from android_runner.status import Status, classify, signal_from_shell_status

TOOLS = ({"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}},)


def test_render_gives_the_runtime_its_own_json_with_media_as_parts_and_text_verbatim():
    item = JobItem(
        id="x",
        turns=(
            (JobPart("image", path="media/0001-1.png"), JobPart("text", "What is [image:/etc/passwd]?")),
            (JobPart("text", ""), JobPart("text", "And $(rm -rf /)\n`x`")),
        ),
        system="Be brief.",
        tools=TOOLS,
        max_output_tokens=16,
    )
    conv = render(item, "/data/local/tmp/edgefarm/runs/r/job")
    assert conv.system_message == "Be brief." and conv.max_output_tokens == 16
    assert json.loads(conv.tools_json) == list(TOOLS) and conv.tools_json == json.dumps(list(TOOLS))
    first, second = (json.loads(m) for m in conv.messages)
    assert first == {
        "role": "user",
        "content": [
            {"type": "image", "path": "/data/local/tmp/edgefarm/runs/r/job/media/0001-1.png"},
            {"type": "text", "text": "What is [image:/etc/passwd]?"},  # text, never a media tag
        ],
    }
    assert second["content"] == [{"type": "text", "text": "And $(rm -rf /)\n`x`"}]  # empty parts dropped
    assert conv.sampler == Sampler(top_k=1, top_p=0.95, temperature=1.0, seed=0)  # the runtime's defaults


def test_job_file_is_length_prefixed_so_any_text_passes_byte_for_byte():
    item = JobItem(id="x", turns=((JobPart("text", "line1\nS 2\nE\n\u00e9\u4e2d"),),), system="a\nb")
    data = job_file_text([(7, render(item, "/j"))])
    lines = data.split(b"\n")
    assert lines[0] == b"EFJOB 1" and lines[1] == b"S 7"
    assert lines[2] == f"Y {len('a' + chr(10) + 'b')}".encode()
    m = data.index(b"\nM ") + 3
    length = int(data[m : data.index(b"\n", m)])
    body = data[data.index(b"\n", m) + 1 :][:length]
    assert json.loads(body)["content"][0]["text"] == "line1\nS 2\nE\n\u00e9\u4e2d"
    assert data.endswith(b"E\n")


def test_a_streamed_request_is_marked_for_the_native_runner_and_only_it():
    """`edgefarm serve`: the A record after a streamed request's messages (native/job.h); none otherwise."""
    streamed, whole = (
        JobItem(id=str(n), turns=((JobPart("text", "A\n"),),), stream=s) for n, s in ((1, True), (2, False))
    )
    data = job_file_text([(1, render(streamed, "/j")), (2, render(whole, "/j"))])
    first, second = data.split(b"S 2\n")
    assert first.endswith(b"\nA\nE\n") and b"\nA\nE\n" not in second and second.endswith(b"}\nE\n")


def test_sampler_fills_unset_fields_with_the_runtime_defaults():
    assert sampler_of({"top_k": 40, "temperature": 0.7}) == Sampler(40, 0.95, 0.7, 0)
    assert sampler_of(None) == Sampler()


def test_reply_text_reads_text_parts_and_tool_calls():
    assert (
        reply_text(
            {"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
        )
        == "ab"
    )
    call = {"tool_calls": [{"type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}]}
    assert json.loads(reply_text(call)) == {"name": "f", "arguments": {"x": 1}}
    assert reply_text({"content": "plain"}) == "plain"


def test_unsupported_is_decided_the_same_for_every_runner():
    image = JobItem(id="i", turns=((JobPart("image", path="m.png"),),))
    video = JobItem(id="v", turns=((JobPart("video", path="m.mp4"),),))
    assert unsupported_reason(image, vision=True, audio=False) == ""
    assert "vision" in unsupported_reason(image, vision=False, audio=True)
    assert "video" in unsupported_reason(video, vision=True, audio=True)


def test_one_classification_of_how_a_runner_ended():
    assert classify(124, None) is Status.TIMEOUT
    assert classify(None, 9) is Status.KILLED and classify(0, None, "oom") is Status.OOM  # oom needs evidence
    assert classify(None, 9, "", "peak 7900 MB of 8000 MB available") is Status.OOM
    assert classify(None, 6) is Status.CRASH and classify(None, 11) is Status.CRASH
    assert classify(1, None) is Status.ERROR and classify(0, None, "context_overflow") is Status.ERROR
    assert classify(0, None) is Status.OK and Status.OK == "ok"
    assert signal_from_shell_status(137) == 9 and signal_from_shell_status(1) is None
    assert signal_from_shell_status(124) is None
