"""`--backend gpu` on a device without a GPU (this host): the backend's own message and exit code,
not "the model could not be loaded" (issue 22). The real litert_lm runtime says why, in its log."""

from __future__ import annotations

import json
import subprocess
import sys

from android_runner.settings import SETTINGS_FILE, RunnerSettings
from android_runner.status import BACKEND_UNAVAILABLE_EXIT
from orchestrator.errors import BackendUnavailable, ModelError

from .conftest import REPO, TINY_TEXT


def test_the_runner_exits_backend_unavailable_with_the_runtimes_words(tmp_path):
    job = tmp_path / "job"
    job.mkdir()
    (job / "job.jsonl").write_text("")
    settings = RunnerSettings(model=str(TINY_TEXT), cache_dir=str(tmp_path / "cache"), backend="gpu")
    (job / SETTINGS_FILE).write_text(settings.render())
    p = subprocess.run(
        [sys.executable, str(REPO / "android_runner" / "entry.py"), "--job", str(job)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert p.returncode == BACKEND_UNAVAILABLE_EXIT, (p.returncode, p.stdout[-2000:])
    fatal = next(json.loads(ln.split(" FATAL ", 1)[1]) for ln in p.stdout.splitlines() if " FATAL " in ln)
    assert fatal["kind"] == "gpu_unavailable"
    # the runtime's own reason (this host has no GPU adapter), first, not the loader's chatter
    assert fatal["detail"].startswith("Failed to initialize WebGPU environment: INTERNAL: No adapters found")


def test_a_run_with_backend_gpu_says_the_backend_is_missing_not_the_model(run_here):
    p, _ = run_here("--backend", "gpu", "--model", str(TINY_TEXT), "--modality", "text", "--limit", "1")
    assert "the gpu backend is not available on this device (gpu_unavailable); the runtime said:" in p.stderr
    assert "Failed to initialize WebGPU environment: INTERNAL: No adapters found" in p.stderr
    assert "fix: run with --backend cpu, or give this device the GPU runtime" in p.stderr
    assert "model file" not in p.stderr and "could not be loaded" not in p.stderr
    assert p.returncode != ModelError.exit_code  # the run's code for it is BackendUnavailable's (cli)
    assert BackendUnavailable.exit_code == 6
