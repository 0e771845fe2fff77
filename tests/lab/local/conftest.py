"""Real runs on this host: the real litert_lm runtime, the bundled tiny models, the `edgefarm` CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import NamedTuple

import pytest

REPO = Path(__file__).resolve().parents[3]
MODELS = REPO / "data" / "models"
TINY_MM = MODELS / "tiny-mm.litertlm"
TINY_TEXT = MODELS / "tiny-text.litertlm"
BUNDLED = REPO / "data" / "edgemmeval"
FAULTY_RUNNER = Path(__file__).resolve().parent / "faulty_runner.py"


def edgefarm(*args: str, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the real console entry point as a user would (a child process)."""
    full_env = {**os.environ, "COLUMNS": "200", **(env or {})}
    full_env.pop("EDGEFARM_INVENTORY", None)
    return subprocess.run(
        [sys.executable, "-m", "orchestrator", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
        cwd=REPO,
        check=False,
    )


@pytest.fixture(scope="session")
def canned() -> list[dict]:
    return json.loads((MODELS / "canned.json").read_text())


@pytest.fixture()
def local_inventory(tmp_path: Path):
    """An inventory whose `this-host` keeps its work folder inside the test's tmp_path."""

    def make(python: str | None = None) -> Path:
        inv = tmp_path / "devices.yaml"
        entry = {"name": "this-host", "kind": "local", "workdir": str(tmp_path / "work")}
        if python:
            entry["python"] = python
        inv.write_text(json.dumps({"devices": [entry]}))
        return inv

    return make


def python_wrapper(tmp_path: Path) -> str:
    """A device `python` that runs the real runner under faulty_runner.py (faults chosen by env)."""
    wrapper = tmp_path / "python-with-faults"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAULTY_RUNNER}" "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper)


class Ran(NamedTuple):
    proc: subprocess.CompletedProcess
    run_dir: Path | None  # the run folder `--out` got; None when the run made none


def only_run_dir(out: Path) -> Path | None:
    """The one run folder under `out` (None when there is none; more than one is a failure)."""
    runs = [p for p in out.iterdir() if p.is_dir()] if out.exists() else []
    assert len(runs) <= 1, runs
    return runs[0] if runs else None


@pytest.fixture()
def run_here(tmp_path: Path, local_inventory):
    """`edgefarm run --devices local --inventory <this test's inventory> --out <tmp_path>/runs <flags>`;
    `faulty=True` gives the device the faulty_runner.py python."""

    def run(
        *flags: str,
        faulty: bool = False,
        env: dict | None = None,
        out: Path | None = None,
        devices: str = "local",
    ) -> Ran:
        out = out or tmp_path / "runs"
        inv = local_inventory(python_wrapper(tmp_path) if faulty else None)
        p = edgefarm("run", "--devices", devices, "--inventory", str(inv), "--out", str(out), *flags, env=env)
        return Ran(p, only_run_dir(out))

    return run


def results(run_dir: Path, device: str = "this-host") -> list[dict]:
    """A device's results.jsonl, one record per line (a line that is not JSON fails the test)."""
    return [json.loads(x) for x in (run_dir / "devices" / device / "results.jsonl").read_text().splitlines()]


def device_json(run_dir: Path, name: str, device: str = "this-host") -> dict:
    """A JSON file of one device's folder in the run (report.json, outcome.json, results.json...)."""
    return json.loads((run_dir / "devices" / device / name).read_text())


def run_json(run_dir: Path, name: str = "report.json") -> dict:
    """A JSON file at the top of the run folder (the combined report.json, run.json)."""
    return json.loads((run_dir / name).read_text())


class StubEndpoint(BaseHTTPRequestHandler):
    """Base of the tests' stub HTTP endpoints (LLM judges): `answer` sends a JSON body; no request log."""

    def answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def serve(handler: type[StubEndpoint]) -> HTTPServer:
    """The handler on a free loopback port, served from a daemon thread (call `shutdown()` when done)."""
    server = HTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
