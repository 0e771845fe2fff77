"""`edgefarm serve` as a user starts it, and what its tests send: the official `openai` client, a run's job
lines as chat messages. Shared by the lab tests of this host (tests/lab/local) and of phones (tests/lab/adb)."""

from __future__ import annotations

import base64
import json
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import openai

REPO = Path(__file__).resolve().parents[2]
TINY_MM = REPO / "data" / "models" / "tiny-mm.litertlm"
KEY = "lab-key-1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`edgefarm serve` as a user starts it: a child process, stopped with Ctrl-C (SIGINT)."""

    def __init__(self, tmp: Path, *flags: str, env: dict, devices: str = "this-host",
                 within_s: float = 90.0, settled: tuple[str, ...] = ("ready",)) -> None:  # fmt: skip
        self.tmp, self.port, self.out = tmp, free_port(), tmp / "runs"
        env = {k: v for k, v in env.items() if k not in ("EDGEFARM_API_KEY", "EDGEFARM_INVENTORY")}
        self.log = open(tmp / "serve.log", "w+")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "orchestrator", "serve", "--devices", devices, "--port", str(self.port),
             "--out", str(self.out), "--db", "none", "--model", str(TINY_MM), "--api-key", KEY, *flags],
            cwd=REPO, env=env, stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.client = openai.OpenAI(base_url=self.url, api_key=KEY, max_retries=0, timeout=60)
        self.wait_ready(within_s, settled)

    def wait_ready(self, within_s: float, settled: tuple[str, ...] = ("ready",)) -> None:
        """Until every model's state is one of `settled` (a test that expects a model `down` says so)."""
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.output()
            ask = urllib.request.Request(f"{self.url}/models", headers={"Authorization": f"Bearer {KEY}"})
            try:
                with urllib.request.urlopen(ask, timeout=2) as r:
                    models = json.loads(r.read())["data"]
                if models and all(m["edgefarm"]["state"] in settled for m in models):
                    return
            except (OSError, KeyError, ValueError):
                pass
            time.sleep(0.1)
        raise AssertionError(f"not ready within {within_s} s:\n{self.output()}")

    def output(self) -> str:
        if not self.log.closed:
            self.log.flush()
        return (self.tmp / "serve.log").read_text()

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(timeout=60)
        finally:
            self.log.close()


def data_url(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode()


def as_messages(item: dict, job: Path) -> list[dict]:
    """A job line of `edgefarm run` as OpenAI messages: its parts in their order, media as data: URLs."""
    messages = [{"role": "system", "content": item["system"]}] if item.get("system") else []
    for turn in item["turns"]:
        parts = [{"type": "text", "text": p["text"]} if p["kind"] == "text" else
                 {"type": "image_url", "image_url": {"url": data_url(job / p["path"])}} for p in turn]  # fmt: skip
        messages.append({"role": "user", "content": parts})
    return messages
