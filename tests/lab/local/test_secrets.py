"""Issue 24: credentials in a `--judge` URL are used, never written, through the real CLI.

`http://user:PW@host/v1?api_key=KEY` put PW and KEY into run.json, report.json/.md/.html and the
device report (10 places), failed to connect (urllib cannot send userinfo) and appended
`/chat/completions` after the query string."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import ClassVar

from ..evalscope_examples import VQA_TEXT, write_examples
from .conftest import StubEndpoint, device_json, serve

PASSWORD, KEY = "Pw-s3cret-9f2", "KEY-0c7e51d"


class _Judge(StubEndpoint):
    """An OpenAI-compatible judge that wants HTTP basic auth user:PASSWORD and ?api_key=KEY."""

    seen: ClassVar[list[tuple[str, str]]] = []

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        auth = self.headers.get("Authorization", "")
        _Judge.seen.append((self.path, auth))
        ok = auth == "Basic " + base64.b64encode(f"user:{PASSWORD}".encode()).decode()
        ok = ok and self.path == f"/v1/chat/completions?api_key={KEY}"
        reply = {"choices": [{"message": {"content": "CORRECT"}}]} if ok else {"error": "unauthorized"}
        data = json.dumps(reply).encode()
        self.answer(200 if ok else 401, data)


def every_file_text(folder: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in sorted(folder.rglob("*")) if p.is_file())


def test_a_judge_url_with_credentials_is_used_and_never_written(tmp_path: Path, run_here):
    vqa, _ = write_examples(tmp_path, vqa_rows=(VQA_TEXT,))
    server = serve(_Judge)
    url = f"http://user:{PASSWORD}@127.0.0.1:{server.server_port}/v1?api_key={KEY}"
    try:
        p, run_dir = run_here("--dataset", str(vqa), "--max-output-tokens", "4", "--judge", url,
                              "--judge-model", "grader")  # fmt: skip
        assert p.returncode == 0, p.stderr
        # used: basic auth from the userinfo, the path joined before the query string
        assert _Judge.seen and _Judge.seen[-1][0] == f"/v1/chat/completions?api_key={KEY}"
        assert _Judge.seen[-1][1].startswith("Basic ")
        accuracy = [m for m in device_json(run_dir, "report.json")["metrics"] if m["metric"] == "Accuracy"]
        assert accuracy and accuracy[0]["score"] == 1.0, accuracy
        # never written, never shown
        text = every_file_text(tmp_path / "runs") + p.stdout + p.stderr
        assert PASSWORD not in text and KEY not in text
        recorded = json.loads((run_dir / "run.json").read_text())["flags"]["judge_url"]
        assert recorded == f"http://user:***@127.0.0.1:{server.server_port}/v1?api_key=***"
        assert "api_key=***" in (run_dir / "report.md").read_text()

        # --resume cannot take the secret from run.json: it asks for --judge again, then agrees with it
        p = run_here("--resume", str(run_dir)).proc
        assert p.returncode == 2 and "pass --judge again with its full value" in p.stderr, p.stderr
        assert PASSWORD not in p.stderr and KEY not in p.stderr
        p = run_here("--resume", str(run_dir), "--judge", url).proc
        assert p.returncode == 0, p.stderr
    finally:
        server.shutdown()
        server.server_close()
    assert PASSWORD not in every_file_text(tmp_path / "runs")
