"""`edgefarm run --units` on three identical lab Pixel 8s (own lab: one adb server), one of them made 15%
slower: the upstream stand-in's `sleep` fault (the lab's slow phone, fake_litert_lm_advanced_main.py) holds
each sample 6 s on every unit, and its `slower 0.15` fault makes the third unit's whole process 15% longer
(its start and work too: a fixed 6.9 s sleep was only 4% of a sample under CI's load, where the binary's
own start took ~13 s, and nothing was named; a fresh-clone suite at 2262761 drew that). A sleep, not CPU
work: three units in parallel on a 2-core host would otherwise measure the host's contention (tried with
the native runner and a 1/1.15 clock: a within-unit CV of 42%). Every unit runs every sample; the report gives each figure's between-unit CV with
its interval beside the within-unit CV (report.json, report.md, report.html) and names the slow unit on
the time per sample, and no other unit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import _require_tools, running_lab
from .sandbox import PIXEL_8

REPO = Path(__file__).resolve().parents[3]
FAULTS = ("local", "tmp", "edgefarm-lab-faults")
LIMIT = 4


@pytest.fixture(scope="module")
def triplet_lab(tmp_path_factory):
    _require_tools()
    with running_lab(tmp_path_factory.mktemp("units-lab"), [(f"u{i}", PIXEL_8, 0) for i in range(3)], hosts=1) as lab:
        yield lab


def test_three_identical_phones_one_slower_is_named(triplet_lab, tmp_path):
    out = tmp_path / "runs"
    env = triplet_lab.env(COLUMNS="200")
    env.pop("EDGEFARM_INVENTORY", None)
    env["EDGEFARM_PHONE_RUNNER"] = "upstream"
    for label, faults in (("u0", "sleep 6.0\n"), ("u1", "sleep 6.0\n"), ("u2", "sleep 6.0\nslower 0.15\n")):
        triplet_lab.device_root(label).joinpath(*FAULTS).write_text(faults)
    argv = [sys.executable, "-m", "orchestrator", "run", "--devices", "all", "--units", "--modality", "text",
            "--limit", str(LIMIT), "--out", str(out)]  # fmt: skip
    p = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert p.returncode == 0, p.stderr[-3000:]
    (run_dir,) = [d for d in out.iterdir() if d.is_dir()]
    run = json.loads((run_dir / "run.json").read_text())
    (group, members), = run["units"].items()
    assert len(members) == 3 and sorted(run["devices"]) == sorted(members)  # a row per unit, nothing merged
    slow = next(m for m in members if triplet_lab.serials["u2"] in json.loads(
        (run_dir / "devices" / m / "device.json").read_text()).get("serial", ""))  # fmt: skip
    for m in members:  # every unit ran every sample
        rows = (run_dir / "devices" / m / "results.jsonl").read_text().splitlines()
        assert len(rows) == LIMIT, m
    report = json.loads((run_dir / "report.json").read_text())
    (g,) = report["units"]
    assert g["name"] == group and sorted(g["units"]) == sorted(members)
    wall = next(f for f in g["figures"] if f["field"] == "wall_ms")
    print(json.dumps(wall), g["outliers"])
    assert wall["samples"] == LIMIT and wall["between_cv"] is not None and wall["within_cv"] is not None
    lo, hi = wall["between_cv_ci"]
    assert lo <= wall["between_cv"] <= hi and lo > 0.02  # the slow unit makes the units differ
    ratio = wall["against_others"][slow][0]
    assert 1.06 < ratio < 1.25, ratio  # ~13% slower end to end, on a shared 2-core host
    named = [o for o in g["outliers"] if "Time per sample" in o]
    assert len(named) == 1 and named[0].startswith(f"{slow} stands out on Time per sample") and "slower" in named[0]
    assert not [o for o in g["outliers"] if not o.startswith(slow) and "Time per sample" in o]  # nor another unit
    html = (run_dir / "report.html").read_text()
    assert f"Units of {group} (--units)" in html and "Between-unit CV (95%)" in html and named[0].split(":")[0] in html
    assert f"## Units of {group} (--units)" in (run_dir / "report.md").read_text()
