"""The predicted memory floor is checked against a phone's RAM BEFORE the run starts: a phone whose RAM
holds the model file but not its floor (weights + KV cache at the token limit) is refused with the
reason in run.json, no model byte reaches it, and a run in which no device ran exits non-zero."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from orchestrator.models import BUNDLED_MODEL, inspect_model

from .sandbox import PIXEL_8, PhoneSpec

REPO = Path(__file__).resolve().parents[3]


def test_a_phone_below_the_models_memory_floor_is_refused_before_the_push(adb_lab, tmp_path):
    model = inspect_model(BUNDLED_MODEL)
    floor_mb = model.facts.floor_bytes(model.max_context_tokens) / 2**20
    ram_kb = 1024  # 1 MB: 80% of it holds the 0.5 MB model file, not its ~1.2 MB floor
    assert model.size_bytes / 2**20 < 0.8 * ram_kb / 1024 < floor_mb
    props = dict(PIXEL_8.props, **{"ro.product.model": "Tiny RAM", "ro.product.name": "tinyram"})
    adb_lab.add_phone("tinyram", PhoneSpec(name="Tiny RAM", props=props, meminfo_total_kb=ram_kb))
    try:
        env = adb_lab.env(COLUMNS="200")
        env.pop("EDGEFARM_INVENTORY", None)
        out = tmp_path / "runs"
        p = subprocess.run([sys.executable, "-m", "orchestrator", "run", "--devices", "google-tiny-ram", "--limit", "2",
                            "--out", str(out)], capture_output=True, text=True, timeout=300, env=env, cwd=REPO,
                           check=False)  # fmt: skip
        assert p.returncode == 3, p.stderr[-3000:]
        assert "no device ran" in p.stderr
        (run_dir,) = [d for d in out.iterdir() if d.is_dir()]
        run = json.loads((run_dir / "run.json").read_text())
        (refused,) = [u for u in run["unusable"] if u["name"] == "google-tiny-ram"]
        assert refused["state"] == "not ready" and f"needs at least {floor_mb:.1f} MB" in refused["problem"]
        assert not (run_dir / "devices" / "google-tiny-ram").exists()  # never started
        assert not (adb_lab.device_root("tinyram") / "local" / "tmp" / "edgefarm" / "models").exists()
        facts = run["model"]["facts"]
        assert facts["predicted_floor_mb"] == round(floor_mb, 2)
    finally:
        adb_lab.remove_phone("tinyram")
