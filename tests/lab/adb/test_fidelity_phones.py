"""--fidelity on lab phones (the native runner, the REAL runtime through its C API): two phones on the
same library score the references identically (Δ exactly 0, "same model"); a phone whose runtime adds
noise to the scores and the decode (noisy_runtime.c wrapping the real library) is flagged at the size
injected, and a noise far below the threshold is not. The host scores the same prompts with the Python
runner: the native pass and the Python pass give the same numbers on the same library."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .runtime_wrap import wrapped_runtime

REPO = Path(__file__).resolve().parents[3]
NOISY = Path(__file__).resolve().parent / "noisy_runtime.c"
SAMPLES = 10


def _noisy_runtime(folder: Path, real_lib: Path, sd: float) -> Path:
    """liblitert-lm.so adding noise of sd nats over the real library (beside it as liblitert-lm-real.so)."""
    return wrapped_runtime(folder, real_lib, NOISY, f"NOISE_SD={sd}")


@pytest.fixture()
def fidelity_farm(adb_lab, tmp_path: Path):
    """`edgefarm run --fidelity` on pixel-8 and sm-s921b (the pinned library), `drifting` (redmi, on a
    runtime adding noise of sd nats) and this host; the report's fidelity by device."""
    _, real_lib = adb_lab.native_runner()
    host_b = f"127.0.0.1:{adb_lab.servers[1].port}"

    def run(sd: float):
        noisy = _noisy_runtime(tmp_path / f"noisy-{sd}", real_lib, sd)
        inv = tmp_path / "devices.yaml"
        inv.write_text(
            f"adb_servers: [{host_b}]\ndevices:\n"
            f"  - name: pixel-8\n    kind: adb\n    serial: '{adb_lab.serials['pixel8']}'\n"
            f"  - name: sm-s921b\n    kind: adb\n    serial: '{adb_lab.serials['s24']}'\n"
            f"  - name: drifting\n    kind: adb\n    serial: '{adb_lab.serials['redmi']}'\n    server: '{host_b}'\n"
            f"    runtime_lib: '{noisy}'\n    libs: ['{noisy.parent / 'liblitert-lm-real.so'}']\n"
            f"  - name: this-host\n    kind: local\n    workdir: '{tmp_path / 'host'}'\n"
        )
        out = tmp_path / f"runs-{sd}"
        env = adb_lab.env(
            COLUMNS="200", EDGEFARM_ALLOW_RUNTIME="1"
        )  # the drifting runtime is not the pinned one
        env.pop("EDGEFARM_INVENTORY", None)
        p = subprocess.run([sys.executable, "-m", "orchestrator", "run", "--devices", "pixel-8,sm-s921b,drifting,this-host",
                            "--inventory", str(inv), "--fidelity", "--reference", "pixel-8", "--modality", "text",
                            "--limit", str(SAMPLES), "--out", str(out), "--sample-timeout", "120"],
                           capture_output=True, text=True, timeout=900, env=env, cwd=REPO, check=False)  # fmt: skip
        assert p.returncode in (0, 1) and out.is_dir(), p.stderr[
            -3000:
        ]  # 1: the tiny model's answers fail the card
        (run_dir,) = [d for d in out.iterdir() if d.is_dir()]
        report = json.loads((run_dir / "report.json").read_text())
        return run_dir, {d["device"]: d for d in report["fidelity"]["devices"]}

    return run


def test_same_library_agrees_exactly_and_a_drifting_runtime_is_flagged_at_its_size(fidelity_farm):
    run_dir, by = fidelity_farm(0.5)
    rows = [
        json.loads(x) for x in (run_dir / "devices" / "pixel-8" / "results.jsonl").read_text().splitlines()
    ]
    assert len(rows) == SAMPLES and all(r["runner"] == "native" and r["fidelity"]["logp"] for r in rows)
    twin, host, drift = by["sm-s921b"], by["this-host"], by["drifting"]
    assert by["pixel-8"]["reason"] == "reference" and twin["scored"] == SAMPLES
    assert twin["mean_abs_dlogp"] == 0.0 and twin["max_abs_dlogp"] == 0.0
    assert twin["verdict"] == "same model within float noise" and twin["answers_identical"] == SAMPLES
    # the Python runner on this host, the same library: the same numbers as the phone's C pass
    assert host["mean_abs_dlogp"] == 0.0 and host["answers_identical"] == SAMPLES
    lo, hi = drift["intervals"]["mean_abs_dlogp"]
    assert drift["verdict"] == "computes differently" and lo <= 0.5 * 0.7979 <= hi  # E|N(0, sd)| = 0.80 sd
    assert drift["answers_identical"] < SAMPLES and drift["worst"]
    md = (run_dir / "report.md").read_text()
    assert "## Fidelity against pixel-8" in md and drift["worst"][0] in md.split("## Largest departures")[1]


def test_a_noise_far_below_the_threshold_is_not_flagged(fidelity_farm):
    _, by = fidelity_farm(0.002)
    quiet = by["drifting"]
    assert 0.0 < quiet["mean_abs_dlogp"] < 0.01 and quiet["verdict"] == "same model within float noise"
    assert quiet["answers_identical"] == SAMPLES
