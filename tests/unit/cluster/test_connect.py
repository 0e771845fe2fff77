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
    res = CliRunner().invoke(main, ["devices", "--cluster", "farmhost-1"])  # refused as the flag is read
    assert res.exit_code == 2 and "'farmhost-1' is not HOST:PORT" in res.output


def test_devices_yaml_cluster_is_the_address_for_run_and_devices(tmp_path):
    """`cluster: HOST:PORT` in devices.yaml does what --cluster does (here: a head that does not answer)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        inv = tmp_path / "devices.yaml"
        inv.write_text(f"cluster: 127.0.0.1:{port}\n")
        for argv in (["devices", "--inventory", str(inv)], ["run", "--inventory", str(inv), "--limit", "1"]):
            res = CliRunner().invoke(main, argv)
            assert res.exit_code == 3, res.output
            assert f"the Ray head at 127.0.0.1:{port} does not answer" in res.output
    inv.write_text("cluster: farmhost-1\n")
    res = CliRunner().invoke(main, ["devices", "--inventory", str(inv)])
    assert res.exit_code == 2 and "devices.yaml:1" in res.output and "cluster" in res.output, res.output
