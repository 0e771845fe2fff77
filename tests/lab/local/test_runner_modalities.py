"""The runner loads the encoders the host says the model has (the settings file's vision_backend and
audio_backend, from the host's inspection), on the real runtime: it does not read the model a second
time to find out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from android_runner.contract import JobItem, JobPart, read_results
from android_runner.settings import SETTINGS_FILE, RunnerSettings
from orchestrator.models import BUNDLED_MODEL

REPO = Path(__file__).resolve().parents[3]
IMAGE = REPO / "data" / "edgemmeval" / "data" / "test"


def _job(tmp_path: Path) -> Path:
    job = tmp_path / "job"
    (job / "media").mkdir(parents=True)
    png = next(IMAGE.rglob("*.png"))
    (job / "media" / "0.png").write_bytes(png.read_bytes())
    items = [  # job.jsonl as the host writes it (orchestrator/jobs.py write_bundle): a JobItem per line
        JobItem(id="text", turns=((JobPart("text", text="What is the capital of Japan?"),),), max_output_tokens=8),
        JobItem(id="image", turns=((JobPart("image", path="media/0.png"), JobPart("text", text="What is this?")),),
                max_output_tokens=8),
    ]  # fmt: skip
    (job / "job.jsonl").write_text("".join(item.to_json() + "\n" for item in items))
    return job


def _runner(job: Path, vision: bool, audio: bool) -> tuple[dict, dict]:
    settings = RunnerSettings(model=str(BUNDLED_MODEL), cache_dir=":nocache", vision_backend="cpu" if vision else "",
                              audio_backend="cpu" if audio else "")  # fmt: skip
    (job / SETTINGS_FILE).write_text(settings.render())
    argv = [sys.executable, str(REPO / "android_runner" / "entry.py"), "--job", str(job)]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False, cwd=REPO)
    assert p.returncode == 0, p.stdout + p.stderr
    ready = next(
        json.loads(ln.split(" ", 2)[2]) for ln in p.stdout.splitlines() if ln.startswith("EDGEFARM READY")
    )
    return ready, {r.id: r for r in read_results(str(job / "results.jsonl"))}


def test_text_only_from_the_host_loads_no_vision_encoder(tmp_path: Path):
    ready, rows = _runner(_job(tmp_path), vision=False, audio=False)
    assert ready["vision"] is False and ready["audio"] is False
    assert rows["text"].status == "ok"
    assert rows["image"].status == "unsupported" and "no vision encoder" in rows["image"].error


def test_with_both_encoders_said_the_runner_loads_both(tmp_path: Path):
    ready, rows = _runner(_job(tmp_path), vision=True, audio=True)
    assert ready["vision"] is True and ready["audio"] is True
    assert rows["text"].status == rows["image"].status == "ok"
