"""The model crosses the network once per farm host: chunks through Ray's object store into each
host's cache, 0 bytes on a rerun, a corrupted chunk refused (docs/cluster.md)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.cluster
HERE = Path(__file__).resolve().parent


def test_a_file_reaches_each_farm_host_once_and_a_rerun_moves_nothing(cluster_lab, tmp_path):
    model = tmp_path / "model.litertlm"
    model.write_bytes(os.urandom(5 * 1024 * 1024 + 12345))  # 6 chunks of 1 MiB, the last one short
    other = tmp_path / "other.bin"
    other.write_bytes(os.urandom(3 * 1024 * 1024))
    p = cluster_lab.python(HERE / "drive_transfer.py", cluster_lab.address, str(model), str(other))
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    size, sha = model.stat().st_size, hashlib.sha256(model.read_bytes()).hexdigest()
    assert out["hosts"] == sorted(cluster_lab.hosts) and out["sha256"] == sha and out["chunks"] == 6
    for host, lab in cluster_lab.hosts.items():
        first, again = out["first"][host], out["again"][host]
        assert (first["bytes_received"], first["chunks_received"], first["already_held"]) == (size, 6, False)
        assert (again["bytes_received"], again["chunks_received"], again["already_held"]) == (0, 0, True)
        cached = Path(out["cached"][host])
        assert cached.is_relative_to(lab.cache)  # the host's own cache folder, keyed by sha256
        assert cached.name == sha and hashlib.sha256(cached.read_bytes()).hexdigest() == sha
    assert "chunk 0 of other.bin" in out["refused"] and "refused" in out["refused"]
    assert not Path(out["corrupt_path"]).exists()
