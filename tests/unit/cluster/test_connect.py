"""A cluster address that does not answer is a clear error at once (Ray alone retries for minutes)."""

from __future__ import annotations

import socket

from click.testing import CliRunner

from orchestrator.cli import main


def test_a_head_that_does_not_answer_is_named_with_the_fix():
    with socket.socket() as s:  # a port nobody listens on: bound, never listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        res = CliRunner().invoke(main, ["devices", "--cluster", f"127.0.0.1:{port}"])
    assert res.exit_code == 3
    assert f"--cluster 127.0.0.1:{port}: the Ray head at 127.0.0.1:{port} does not answer" in res.output
    assert "fix: start the head with `ray start --head" in res.output
    res = CliRunner().invoke(main, ["devices", "--cluster", "farmhost-1"])
    assert res.exit_code == 3 and "(not HOST:PORT)" in res.output
