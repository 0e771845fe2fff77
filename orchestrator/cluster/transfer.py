"""Hand a big file to every farm host once: chunks through Ray's object store, a bounded window.

Each chunk is put into the object store ONCE and handed to every host that lacks the file (Ray
moves it to each node once); at most `window` chunks per host are in flight, so the controller
holds at most `window` chunks in memory, whatever the file's size."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import ray

from .blob import read_chunk
from .types import WINDOW_CHUNKS, Blob, Received, TransferRefused


def _get(refs):
    """ray.get, with an agent's own error (a refused chunk) re-raised as itself."""
    try:
        return ray.get(refs)
    except ray.exceptions.RayTaskError as e:
        if isinstance(e.cause, TransferRefused):
            raise e.cause from None
        raise


def hand_over(
    path: Path, blob: Blob, agents: Mapping[str, object], *, window: int = WINDOW_CHUNKS
) -> dict[str, Received]:
    """Make sure every agent's host cache holds `blob` (read from `path`); what each host took in."""
    hosts = sorted(agents)
    wants = _get([agents[h].offer.remote(blob) for h in hosts])
    needing = [h for h, want in zip(hosts, wants) if want]
    pending: list = []
    for index in range(blob.chunks if needing else 0):
        ref = ray.put(read_chunk(path, blob, index))
        pending += [agents[h].take_chunk.remote(blob, index, ref) for h in needing]
        del ref  # the agents' tasks keep the chunk alive until each has taken it
        while len(pending) > window * len(needing):
            done, pending = ray.wait(pending, num_returns=1)
            _get(done)
    _get(pending)
    return dict(zip(hosts, _get([agents[h].finish.remote(blob) for h in hosts])))
