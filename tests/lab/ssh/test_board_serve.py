"""`edgefarm serve` over a board (the loopback sshd, the real runtime): requests reach the board's Python
runner as lines on its stdin through the SSH channel (runners/serve_link.py), an image's media pushed
first; a stream left mid-answer is stopped on the board and the next request answered."""

from __future__ import annotations

import json
import os

from ..serve_client import TINY_MM, Server, data_url
from .conftest import write_inventory

MODEL = "pi-lab/cpu"
IMAGE = TINY_MM.parents[2] / "data" / "edgemmeval" / "data" / "test" / "images" / "IMG-012.png"


def test_a_board_answers_text_image_and_stream_through_its_runner_stdin(board, tmp_path):
    inv = write_inventory(tmp_path / "devices.yaml", board.entry())
    server = Server(tmp_path, "--inventory", str(inv), env=dict(os.environ), devices="pi-lab", within_s=120)
    try:
        c = server.client
        ping = c.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "edgefarm ping"}])
        assert ping.choices[0].message.content == "pong" and ping.usage.completion_tokens > 0
        ef = ping.model_extra["edgefarm"]
        assert ef["device"] == "pi-lab" and ef["kind"] == "ssh" and ef["runner"] == "python"
        assert ef["ttft_ms"] > 0 and ef["peak_rss_mb"] > 0
        pieces = [ch.choices[0].delta.content or "" for ch in c.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "Count to three."}], stream=True) if ch.choices]  # fmt: skip
        assert "".join(pieces) == "one two three" and sum(map(bool, pieces)) > 1
        seen = c.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": [
            {"type": "text", "text": "Describe the picture."},
            {"type": "image_url", "image_url": {"url": data_url(IMAGE)}}]}])  # fmt: skip
        assert seen.choices[0].message.content == "a tiny picture"
    finally:
        assert server.stop() == 0, server.output()
    run_dir = next(p for p in server.out.iterdir() if p.is_dir())
    rows = [json.loads(ln) for ln in (run_dir / "devices" / "pi-lab" / "results.jsonl").read_text().splitlines()]
    assert [r["status"] for r in rows] == ["ok"] * 3
    assert not [p for p in board.root.rglob(f"runs/{run_dir.name}/pi-lab/job/media/*")], "a request's media left"
