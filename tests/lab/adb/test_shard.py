"""The user's story: four identical Pixel 8s on two farm hosts share one evaluation with `--shard`.

Own lab (two real adb servers, four emulated Pixel 8s, the real native runner on the real runtime),
so the session lab's phones and names stay as other tests expect them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from .conftest import _require_tools, running_lab
from .sandbox import PIXEL_8

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def twin_lab(tmp_path_factory):
    _require_tools()
    tmp = tmp_path_factory.mktemp("shard-lab")
    with running_lab(tmp, [(f"p{i}", PIXEL_8, i % 2) for i in range(4)]) as lab:
        yield lab


def test_four_identical_phones_split_the_samples_and_report_as_one_row(twin_lab, tmp_path):
    inv = tmp_path / "devices.yaml"
    inv.write_text(f"adb_servers: [127.0.0.1:{twin_lab.servers[1].port}]\n")
    out = tmp_path / "runs"
    env = twin_lab.env(COLUMNS="200")
    env.pop("EDGEFARM_INVENTORY", None)
    argv = [sys.executable, "-m", "orchestrator", "run", "--devices", "all", "--inventory", str(inv), "--shard",
            "--per-modality", "3", "--max-output-tokens", "8", "--sample-timeout", "60", "--out", str(out)]  # fmt: skip
    p = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert p.returncode == 0, p.stderr[-3000:]
    (run_dir,) = [d for d in out.iterdir() if d.is_dir()]
    run = json.loads((run_dir / "run.json").read_text())
    serials = sorted(twin_lab.serials.values())
    assert run["devices"] == ["pixel-8-x4"]  # one row per phone model
    members = run["shards"]["pixel-8-x4"]
    assert len(members) == 4
    sample_ids = run["dataset"]["sample_ids"]
    assert len(sample_ids) == 21

    # each member ran its round-robin share, in its own folder, and nothing else
    shares = [[r["id"] for r in _rows(run_dir / "devices" / m / "results.jsonl")] for m in members]
    assert sorted(i for s in shares for i in s) == sorted(sample_ids)
    assert [len(s) for s in shares] == [6, 5, 5, 5]

    merged = _rows(run_dir / "devices" / "pixel-8-x4" / "results.jsonl")
    assert [r["id"] for r in merged] == sample_ids  # every sample once, in dataset order
    assert all(r["status"] in ("ok", "unsupported") for r in merged)
    assert sorted(Counter(r["ran_on"] for r in merged).values()) == [5, 5, 5, 6]
    assert {r["ran_on"] for r in merged} == set(serials)
    score = json.loads((run_dir / "devices" / "pixel-8-x4" / "report.json").read_text())
    assert score["summary"]["total_scored"] + len(score["summary"].get("skipped") or []) == 21

    report = json.loads((run_dir / "report.json").read_text())
    (row,) = report["devices"]
    assert row["device"] == "pixel-8-x4" and row["samples"] == 21 and row["hardware"] == "Google Pixel 8"
    assert row["shards"].startswith("4 devices: ") and all(s in row["shards"] for s in serials)
    assert row["model_loads"] == 4  # one engine load per phone
    cells = {s["id"]: s["cells"]["pixel-8-x4"] for s in report["samples"]}
    assert {c["ran_on"] for c in cells.values()} == set(serials)
    md = (run_dir / "report.md").read_text()
    assert "Shards" in md and f"(on {serials[0]})" in md
    assert f"(on {serials[0]})" in (run_dir / "report.html").read_text()

    again = subprocess.run([sys.executable, "-m", "orchestrator", "report", str(run_dir), "--format", "json"],
                           cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["devices"][0]["shards"] == row["shards"]


def _rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
