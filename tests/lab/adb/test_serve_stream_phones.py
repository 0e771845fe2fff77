"""A streamed request to a lab phone (`edgefarm serve`; the native runner's streaming call, native/stream.c) with
the official `openai` client: the answer comes in pieces that join to the same request's whole answer, the last
chunk's usage and telemetry as ever; a client gone mid-stream stops the phone's answer (the runtime's own
cancel) and the phone answers the next request at once. `pixel-8` runs the pinned library; `slow-redmi` the
same library under drip_runtime.c, whose decode waits DRIP_MS after each piece of an answer to a message
naming `drip-me` (a slow phone, so a client can leave mid-answer)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from ..serve_client import Server
from .runtime_wrap import wrapped_runtime

DRIP = Path(__file__).resolve().parent / "drip_runtime.c"
DRIP_MS = 3000
PIXEL, SLOW = "pixel-8", "slow-redmi"
COUNT = [
    {"role": "user", "content": "Count to three."}
]  # the tiny model's "one two three": 6 tokens, 5 pieces


@pytest.fixture(scope="module")
def served(adb_lab, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("serve-stream")
    _, real_lib = adb_lab.native_runner()
    drip = wrapped_runtime(tmp / "drip", real_lib, DRIP, f"DRIP_MS={DRIP_MS}")
    host_b = f"127.0.0.1:{adb_lab.servers[1].port}"
    inv = tmp / "devices.yaml"
    inv.write_text(
        f"adb_servers: [{host_b}]\ndevices:\n"
        f"  - name: {PIXEL}\n    kind: adb\n    serial: '{adb_lab.serials['pixel8']}'\n"
        f"  - name: {SLOW}\n    kind: adb\n    serial: '{adb_lab.serials['redmi']}'\n    server: '{host_b}'\n"
        f"    runtime_lib: '{drip}'\n    libs: ['{drip.parent / 'liblitert-lm-real.so'}']\n"
    )
    env = adb_lab.env(EDGEFARM_ALLOW_RUNTIME="1")  # the slow phone's wrapper is not the pinned library
    s = Server(tmp, "--inventory", str(inv), env=env, devices=f"{PIXEL},{SLOW}", within_s=120)
    yield s
    if s.proc.poll() is None:
        s.stop()


def _rows(server: Server, device: str) -> list[dict]:
    (run_dir,) = [p for p in server.out.iterdir() if p.is_dir()]
    return [json.loads(x) for x in (run_dir / "devices" / device / "results.jsonl").read_text().splitlines()]


def test_a_streamed_answer_comes_in_pieces_that_join_to_the_whole_answer(served):
    """Greedy, the same request whole and streamed: more than one content chunk, joined equal to the whole
    answer; the last chunk's usage equal to the whole answer's, its edgefarm object the same fields."""
    for messages in (COUNT, [{"role": "user", "content": "Tell me a story."}]):
        whole = served.client.chat.completions.create(model=f"{PIXEL}/cpu", messages=messages, max_tokens=64)
        chunks = list(served.client.chat.completions.create(model=f"{PIXEL}/cpu", messages=messages, max_tokens=64,
                                                            stream=True))  # fmt: skip
        pieces = [c.choices[0].delta.content for c in chunks if c.choices[0].delta.content]
        answer = whole.choices[0].message.content
        assert len(pieces) > 1 and "".join(pieces) == answer, (pieces, answer)
        last = chunks[-1]
        assert last.choices[0].finish_reason == whole.choices[0].finish_reason == "stop"
        assert (last.usage.prompt_tokens, last.usage.completion_tokens) == (
            whole.usage.prompt_tokens,
            whole.usage.completion_tokens,
        )
        ef, ef_whole = last.model_extra["edgefarm"], whole.model_extra["edgefarm"]
        assert set(ef) == set(ef_whole) and ef["runner"] == "native" and ef["status"] == "ok"
        assert ef["ttft_ms"] > 0 and ef["decode_tps"] > 0 and ef["peak_rss_mb"] > 0
    rows = _rows(served, PIXEL)
    assert len(rows) == 4 and all(r["status"] == "ok" for r in rows)
    assert rows[0]["output"] == rows[1]["output"] == "one two three"


def test_a_client_gone_mid_stream_stops_the_phones_answer(served):
    """The slow phone's answer would take 4 x DRIP_MS more after its first piece: the client leaves after that
    piece, the phone's runtime is told to stop, its row says so with fewer tokens than the whole answer's, and
    the next request is answered well before the whole answer could have ended."""
    full = served.client.chat.completions.create(model=f"{SLOW}/cpu", messages=COUNT, max_tokens=64)
    assert full.choices[0].message.content == "one two three"  # not dripped: a message without `drip-me`
    stream = served.client.chat.completions.create(
        model=f"{SLOW}/cpu", messages=[{"role": "user", "content": "drip-me Count to three."}], max_tokens=64,
        stream=True,
    )  # fmt: skip
    first = next(iter(stream))
    assert first.choices[0].delta.content == "one"
    stream.close()
    t0 = time.monotonic()
    reply = served.client.chat.completions.create(
        model=f"{SLOW}/cpu", messages=[{"role": "user", "content": "edgefarm ping"}]
    )
    waited = time.monotonic() - t0
    assert reply.choices[0].message.content == "pong"
    assert waited < 4 * DRIP_MS / 1000 - 2, f"{waited:.1f} s: the phone finished the answer first"
    rows = _rows(served, SLOW)
    gone = [r for r in rows if r["status"] == "error" and "client went away" in r["error"]]
    assert len(gone) == 1, rows
    assert 0 < gone[0]["decode_tokens"] < full.usage.completion_tokens, gone[0]
    assert gone[0]["output"].startswith("one") and gone[0]["output"] != "one two three"
