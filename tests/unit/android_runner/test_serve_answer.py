"""`--serve`: a request the client streams is answered piece by piece (the runtime's streaming call, a PIECE
per piece); one it reads whole gets the run's own whole-answer call and no pieces."""

from __future__ import annotations

import litert_lm

from android_runner.backend import BackendVerdict
from android_runner.contract import JobItem, JobPart
from android_runner.litert_runner import LiteRtRunner
from android_runner.memory import MemorySampler


class Reply(dict):
    def to_json(self) -> dict:
        return dict(self)


class Benchmark:
    time_to_first_token_in_second = 0.001
    last_prefill_token_count, last_prefill_tokens_per_second = 3, 300.0
    last_decode_token_count, last_decode_tokens_per_second = 2, 200.0


class Conversation:
    def __init__(self, calls: list[str]) -> None:
        self.calls = calls

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass

    def send_message(self, message) -> Reply:
        self.calls.append("whole")
        return Reply(content=[{"type": "text", "text": "one two"}])

    def send_message_async(self, message):
        self.calls.append("streamed")
        yield Reply(content=[{"type": "text", "text": "one "}])
        yield Reply(content=[{"type": "text", "text": "two"}])

    def get_benchmark_info(self) -> Benchmark:
        return Benchmark()


class Engine:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def create_conversation(self, **kwargs) -> Conversation:
        return Conversation(self.calls)


class Log:
    def offset(self) -> int:
        return 0

    def since(self, offset: int, max_chars: int = 800) -> str:
        return ""


def serving_runner() -> tuple[LiteRtRunner, list[tuple[str, str]]]:
    """A serving runner on a stand-in engine (no model load); the pieces it sends, in a list."""
    runner = LiteRtRunner.__new__(LiteRtRunner)
    runner.lm, runner.engine, runner.media_root, runner.power = litert_lm, Engine(), "", None
    runner.backend_name, runner.threads, runner.threads_seen, runner.init_ms = "cpu", None, None, 1.0
    runner.vision = runner.audio = False
    runner.verdict = BackendVerdict(requested="cpu", ran="cpu")
    sent: list[tuple[str, str]] = []
    runner.pieces = lambda item_id, piece: sent.append((item_id, piece)) or True
    return runner, sent


def test_a_streamed_request_goes_piece_by_piece_one_read_whole_gets_the_whole_call():
    runner, sent = serving_runner()
    ask = JobItem(id="7", turns=((JobPart("text", text="count"),),))
    whole = runner.run(ask, MemorySampler(), Log())
    assert (whole.status, whole.output, sent, runner.engine.calls) == ("ok", "one two", [], ["whole"])
    streamed = runner.run(JobItem(id="8", turns=ask.turns, stream=True), MemorySampler(), Log())
    assert (streamed.status, streamed.output) == ("ok", "one two")
    assert sent == [("8", "one "), ("8", "two")] and runner.engine.calls == ["whole", "streamed"]
    assert whole.decode_tokens == streamed.decode_tokens == 2  # the same row either way


def test_the_stream_flag_travels_in_the_job_line():
    item = JobItem(id="1", turns=((JobPart("text", text="hi"),),), stream=True)
    assert JobItem.from_json(item.to_json()) == item
    assert JobItem.from_json(JobItem(id="1", turns=item.turns).to_json()).stream is False
