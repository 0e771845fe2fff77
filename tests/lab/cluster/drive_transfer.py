"""Controller side of the transfer story, run inside the lab's namespace: hand a file to every farm
host twice, then send one corrupted chunk. Prints one JSON object."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

import ray

from orchestrator.cluster.blob import describe, read_chunk
from orchestrator.cluster.connect import connect, farm_hosts, start_agents
from orchestrator.cluster.transfer import hand_over
from orchestrator.cluster.types import TransferRefused

address, path = sys.argv[1], Path(sys.argv[2])
connect(address)
hosts = [h.name for h in farm_hosts()]
agents = start_agents(hosts)
blob = describe(path, chunk_bytes=1024 * 1024)
first = hand_over(path, blob, agents, window=2)
again = hand_over(path, blob, agents, window=2)
cached = ray.get([agents[h].cached_path.remote(blob) for h in hosts])

# A chunk that changed on the way: the agent must refuse it and keep nothing in its cache.
other = describe(Path(sys.argv[3]), chunk_bytes=1024 * 1024)
agent = agents[hosts[0]]
assert ray.get(agent.offer.remote(other))
bad = bytearray(read_chunk(Path(sys.argv[3]), other, 0))
bad[100] ^= 0xFF
try:
    ray.get(agent.take_chunk.remote(other, 0, bytes(bad)))
    refused = ""
except ray.exceptions.RayTaskError as e:
    refused = str(e.cause) if isinstance(e.cause, TransferRefused) else f"other error: {e}"
held_after = ray.get(agent.cached_path.remote(other))
print(
    json.dumps(
        {
            "hosts": hosts,
            "size": blob.size,
            "sha256": blob.sha256,
            "chunks": blob.chunks,
            "first": {h: asdict(r) for h, r in first.items()},
            "again": {h: asdict(r) for h, r in again.items()},
            "cached": dict(zip(hosts, cached)),
            "refused": refused,
            "corrupt_path": held_after,
        }
    )
)
