"""A served request the client streams, in the native runner (android_runner/native/stream.c) under
ASan/UBSan, against the fake runtime's streaming send (fake_litert_lm.c: the answer in @piece=N byte pieces,
@drip=S apart, from a thread of its own): the job file the host renders (its A record), the PIECE lines
(joined: the row's answer; a character never split between two), the runtime's refusals as the sample's
error row, and in --serve the host's cancel mark stopping the answer mid-way."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from test_native_runner import ENV, run, settings_text  # this folder is on sys.path (no __init__.py)

from android_runner.contract import JobItem, JobPart
from android_runner.conversation import job_file_text, render


def _item(n: int, text: str, stream: bool = True) -> JobItem:
    return JobItem(id=str(n), turns=((JobPart("text", text=text),),), stream=stream)


def _job(*items: JobItem) -> bytes:
    return job_file_text([(int(it.id), render(it, "/job")) for it in items])


def _pieces(lines: list[tuple[str, str]], n: int) -> list[str]:
    pieces = [json.loads(rest) for kind, rest in lines if kind == "PIECE"]
    assert all(set(p) == {"id", "text"} for p in pieces), pieces
    return [p["text"] for p in pieces if p["id"] == str(n)]


def _answer(row: dict) -> str:
    return json.loads(row["response"])["content"][0]["text"]


def test_a_streamed_answer_is_pieces_that_join_to_the_rows_answer(native_build, tmp_path):
    rc, lines, rows, _ = run(
        native_build, tmp_path, _job(_item(1, "@piece=3 hi"), _item(2, "hi", stream=False))
    )
    assert rc == 0, lines
    kinds = [k for k, _ in lines]
    assert kinds == [
        "READY",
        "BEGIN",
        "PIECE",
        "PIECE",
        "PIECE",
        "PIECE",
        "RESULT",
        "BEGIN",
        "RESULT",
        "DONE",
    ]
    assert _pieces(lines, 1) == ["fak", "e a", "nsw", "er"]
    assert [r["status"] for r in rows] == ["ok", "ok"] and {_answer(r) for r in rows} == {"fake answer"}
    assert (
        rows[0]["turns"][0]["decode_tokens"] == 2 and rows[0]["ttft_ms"] > 0
    )  # the runtime's figures, as whole


def test_a_character_is_never_split_between_pieces(native_build, tmp_path):
    """One byte a piece: the runner holds a character's first bytes until its last one comes."""
    rc, lines, rows, _ = run(native_build, tmp_path, _job(_item(1, "@piece=1 @pad=1,c3a9e282ac,f09f9880")))
    assert rc == 0, lines
    assert _pieces(lines, 1) == ["é", "€", "a", "😀"]
    assert _answer(rows[0]) == "é€a😀" and rows[0]["invalid_utf8_bytes"] == 0


def test_a_refused_or_unreadable_stream_is_that_samples_error_row(native_build, tmp_path):
    rc, lines, rows, _ = run(
        native_build, tmp_path, _job(_item(1, "@refuse"), _item(2, "@deep=3"), _item(3, "ok"))
    )
    assert rc == 0, lines
    assert [r["status"] for r in rows] == ["error", "error", "ok"]
    assert "streaming call" in rows[0]["error"] and "Input token ids are too long" in rows[0]["error"]
    assert "not a plain text reply" in rows[1]["error"]
    assert _pieces(lines, 1) == _pieces(lines, 2) == [] and "".join(_pieces(lines, 3)) == "fake answer"


def _request(folder: Path, item: JobItem) -> None:
    tmp = folder / f".{item.id}.tmp"
    tmp.write_bytes(_job(item))
    tmp.rename(folder / f"{int(item.id):09d}.job")


def test_the_cancel_mark_stops_the_answer_and_the_next_request_is_answered(native_build, tmp_path):
    """--serve: 11 pieces 0.5 s apart; the host's mark after the first stops the answer at once (its row
    says so, the pieces so far its answer); the mark is removed, the next request answered; a mark that
    came after its request's answer is swept while no request waits."""
    requests, state = tmp_path / "requests", tmp_path / "state"
    requests.mkdir()
    state.mkdir()
    (tmp_path / "settings").write_text(settings_text(tmp_path / "model.litertlm", native_build.lib))
    argv = [str(native_build.runner), "--settings", str(tmp_path / "settings"), "--serve", str(requests),
            "--results", str(tmp_path / "results.jsonl"), "--state-dir", str(state)]  # fmt: skip
    p = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ, **ENV)
    )
    try:
        assert p.stdout is not None
        seen: list[tuple[str, str]] = []

        def until(kind: str) -> dict | str:
            for raw in p.stdout:
                k, _, rest = raw.rstrip("\n")[9:].partition(" ")
                seen.append((k, rest))
                if k == kind:
                    return json.loads(rest) if rest.startswith("{") else rest
            raise AssertionError(f"no {kind}: {seen}")

        until("READY")
        _request(requests, _item(1, "@piece=1 @drip=0.5 slow"))
        assert until("PIECE") == {"id": "1", "text": "f"}
        (requests / "1.cancel").write_text("\n")
        t0 = time.monotonic()
        row = until("RESULT")
        assert time.monotonic() - t0 < 3.0  # the rest of the answer would take 5 s
        assert row["status"] == "error" and row["error"] == "cancelled: the client went away", row
        pieces = _pieces(seen, 1)
        assert 1 <= len(pieces) < 11 and _answer(row) == "".join(pieces)
        _request(requests, _item(2, "hello", stream=False))
        assert until("RESULT")["status"] == "ok"
        assert not (requests / "1.cancel").exists()
        (requests / "7.cancel").write_text("\n")  # a mark that came after its request's answer
        deadline = time.monotonic() + 10
        while (requests / "7.cancel").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not (requests / "7.cancel").exists()
        (requests / "stop").write_text("")
        assert until("DONE") == {"samples": 2}
        assert p.wait(timeout=30) == 0
    finally:
        if p.poll() is None:
            p.kill()
        p.wait()
    err = p.stderr.read() if p.stderr else ""
    assert "Sanitizer" not in err, err[-3000:]
