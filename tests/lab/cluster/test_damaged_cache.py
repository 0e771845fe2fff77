"""Issue 34 item 2: a cache is trusted only once checked. One byte flipped in a farm host's cached model
(same size, mtime put back) was pushed to the phone as the model: exit 0, no word, run.json naming the
right sha256 while the phone held other bytes, and every later run skipped the push. Now the agent hashes
each cached file whole before its first use in a run: a damaged copy is removed, fetched again and said;
the phone's copy is checked against the run's sha256 and a damaged one is pushed again and said."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from orchestrator.bundled import BUNDLED_MODEL
from orchestrator.farm.rundir import device_folder

pytestmark = pytest.mark.cluster
COMMON = ("--limit", "2", "--modality", "text", "--max-output-tokens", "8")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _flip_one_byte(path: Path) -> None:
    """Change one byte in place; the size and the modification time stay as they were."""
    st = path.stat()
    with open(path, "r+b") as f:
        f.seek(st.st_size // 2)
        b = f.read(1)
        f.seek(st.st_size // 2)
        f.write(bytes([b[0] ^ 0xFF]))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _run(lab, device: str, out: Path):
    p = lab.edgefarm("run", "--cluster", lab.address, "--devices", device, "--out", str(out), *COMMON)
    assert p.returncode == 0, p.stderr[-4000:]
    run = next(out.iterdir())
    outcome = json.loads((device_folder(run, device) / "outcome.json").read_text())
    return p, run, outcome


def test_a_damaged_host_cache_and_a_damaged_phone_copy_are_fetched_again_and_said(cluster_lab, tmp_path):
    lab = cluster_lab
    device = lab.phones_by_host()["h2"][0]
    sha, size = _sha(BUNDLED_MODEL), BUNDLED_MODEL.stat().st_size
    _run(lab, device, tmp_path / "a")  # the model is in h2's cache and on its phone
    blob = lab.hosts["h2"].cache / "cluster" / "blobs" / sha[:2] / sha
    (on_phone,) = lab.phones.device_root("redmi").rglob(f"models/{sha[:16]}/{BUNDLED_MODEL.name}")
    assert _sha(blob) == sha and _sha(on_phone) == sha

    _flip_one_byte(blob)
    p, run, outcome = _run(lab, device, tmp_path / "b")
    said = " ".join(p.stderr.split())
    assert f"farm host h2: its cached copy of {BUNDLED_MODEL.name}" in said and "fetched again" in said, said
    assert any("fetched again" in n for n in outcome["notes"]), outcome["notes"]
    hosts = json.loads((run / "run.json").read_text())["cluster"]["hosts"]
    assert hosts["h2"]["bytes_received"] >= size  # the model crossed again
    assert _sha(blob) == sha and _sha(on_phone) == sha  # the phone never got the damaged bytes
    assert outcome["model_push"]["files_skipped"] == 1  # its copy was the right one all along

    _flip_one_byte(on_phone)
    p, run, outcome = _run(lab, device, tmp_path / "c")
    assert any("the phone's copy of the model" in n and "pushed again" in n for n in outcome["notes"]), (
        outcome
    )
    assert outcome["model_push"]["files"] == 1 and outcome["model_push"]["bytes_sent"] == size
    assert _sha(on_phone) == sha
    hosts = json.loads((run / "run.json").read_text())["cluster"]["hosts"]
    assert hosts["h2"]["bytes_received"] == 0  # the host's copy, checked again this run, was right
