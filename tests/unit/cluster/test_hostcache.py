"""A farm host's cache takes a file in chunks, checks each against the announced sha256, and renames
the whole into place only when its sha256 is the announced one (orchestrator/cluster/hostcache.py)."""

from __future__ import annotations

import hashlib
import os
from dataclasses import replace

import pytest

from orchestrator.cluster.agent import FarmHostAgent
from orchestrator.cluster.blob import describe, read_chunk
from orchestrator.cluster.types import TransferRefused


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "model.litertlm"
    path.write_bytes(os.urandom(10_000))
    return path


def test_chunks_in_any_order_make_the_file_and_a_second_offer_needs_nothing(model, tmp_path):
    blob = describe(model, chunk_bytes=4096)
    assert (blob.size, blob.chunks) == (10_000, 3)
    agent = FarmHostAgent("h1", tmp_path / "cache")
    assert agent.offer(blob) is True
    taken = sum(agent.take_chunk(blob, i, read_chunk(model, blob, i)) for i in (2, 0, 1))
    got = agent.finish(blob)
    assert (taken, got.bytes_received, got.chunks_received, got.already_held) == (10_000, 10_000, 3, False)
    cached = tmp_path / "cache" / "blobs" / blob.sha256[:2] / blob.sha256
    assert cached.read_bytes() == model.read_bytes()
    assert agent.offer(blob) is False
    again = agent.finish(blob)
    assert (again.bytes_received, again.already_held) == (0, True)


def test_a_corrupted_chunk_is_refused_and_nothing_reaches_the_cache(model, tmp_path):
    blob = describe(model, chunk_bytes=4096)
    agent = FarmHostAgent("h1", tmp_path / "cache")
    agent.offer(blob)
    data = bytearray(read_chunk(model, blob, 1))
    data[7] ^= 1
    with pytest.raises(TransferRefused, match="chunk 1 of model.litertlm .* refused") as e:
        agent.take_chunk(blob, 1, bytes(data))
    assert e.value.where == "farm host h1"
    with pytest.raises(TransferRefused, match="outside its 3 chunks"):
        agent.take_chunk(blob, 3, b"")
    assert not agent.cache.holds(blob)


def test_a_file_whose_whole_hash_differs_is_removed_not_renamed(model, tmp_path):
    """Chunk hashes all match but the announced whole-file hash does not (a lying announcement)."""
    blob = replace(describe(model, chunk_bytes=4096), sha256=hashlib.sha256(b"other").hexdigest())
    agent = FarmHostAgent("h1", tmp_path / "cache")
    agent.offer(blob)
    for i in range(blob.chunks):
        agent.take_chunk(blob, i, read_chunk(model, blob, i))
    with pytest.raises(TransferRefused, match="assembled to a different sha256"):
        agent.finish(blob)
    assert not agent.cache.holds(blob)
    assert list((tmp_path / "cache" / "incoming").iterdir()) == []


def test_two_agents_fetch_one_file_at_once_and_a_dead_agents_part_is_cleared(model, tmp_path):
    """Runs from two controllers share a host: each agent assembles its own part file; a part left by
    an agent that died mid-file is removed when the file is fetched again, a live agent's is not."""
    import subprocess

    blob = describe(model, chunk_bytes=4096)
    incoming = tmp_path / "cache" / "incoming"
    incoming.mkdir(parents=True)
    gone = subprocess.Popen(["true"])
    gone.wait()
    (incoming / f"{blob.sha256}.{gone.pid}.part").write_bytes(b"half")
    other = incoming / f"{blob.sha256}.{os.getppid()}.part"  # a live process's transfer in progress
    other.write_bytes(b"half")
    a, b = FarmHostAgent("h1", tmp_path / "cache"), FarmHostAgent("h1", tmp_path / "cache")
    assert a.offer(blob) is True
    assert not (incoming / f"{blob.sha256}.{gone.pid}.part").exists() and other.exists()
    for i in range(blob.chunks):
        a.take_chunk(blob, i, read_chunk(model, blob, i))
    assert a.finish(blob).already_held is False
    assert b.offer(blob) is False  # the other run's agent finds it in place
    assert other.read_bytes() == b"half"


def test_errors_cross_a_process_boundary_whole():
    """An agent's error reaches the controller pickled (through Ray): type, where, fix and extras kept."""
    import pickle

    from orchestrator.errors import DatasetError, DeviceLost

    for err in (TransferRefused("chunk 3 refused", where="farm host h2", fix="rerun"),
                DeviceLost("gone", where="pixel8", fix="plug it in"),
                DatasetError("bad row", where="d.jsonl:4", fix="fix it", problems=["x"])):  # fmt: skip
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is type(err) and str(back) == str(err) and back.__dict__ == err.__dict__
