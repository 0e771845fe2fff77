"""Issue 41: every run records the conditions that move figures, and the report and `compare` say when a
run was loaded. Three identical runs of the tiny model on this host, a CPU hog (a busy-loop child of the
test, not of edgefarm, bounded in time) switched on for the second: its report names the load, and
`compare` of the first with the second names it as the loaded run.

Before, three such runs gave 0.98x, 1.88x and 1.12x for the same setting, each "significant", and
nothing in run.json or the reports said that a program had loaded the host during one of them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .conftest import edgefarm, only_run_dir

HOG_S = 120  # the hog's own bound: it ends even if the test dies before stopping it


def _run(tmp: Path, name: str) -> Path:
    inv = tmp / "devices.yaml"
    inv.write_text(
        json.dumps({"devices": [{"name": "this-host", "kind": "local", "workdir": str(tmp / "w")}]})
    )
    out = tmp / name
    p = edgefarm("run", "--devices", "local", "--inventory", str(inv), "--out", str(out), "--modality", "text",
                 "--limit", "6", "--max-output-tokens", "8", env={"EDGEFARM_DB": str(tmp / "history.sqlite")})  # fmt: skip
    run = only_run_dir(out)
    assert p.returncode == 0 and run is not None, p.stderr[-3000:]
    return run


def _host(run: Path) -> dict:
    return json.loads((run / "run.json").read_text())["conditions"]["host"]


def test_a_run_under_a_cpu_hog_is_named_loaded_in_its_report_and_in_compare(tmp_path: Path):
    quiet = _run(tmp_path, "a")
    busy = f"import time\nend = time.monotonic() + {HOG_S}\nwhile time.monotonic() < end: pass"
    hog = subprocess.Popen([sys.executable, "-c", busy])
    try:
        loaded = _run(tmp_path, "b")
    finally:
        hog.kill()
        hog.wait(timeout=30)
    again = _run(tmp_path, "c")

    for run in (quiet, loaded, again):  # every run records this host's load over the run
        host = _host(run)
        assert host["ticks"] >= 2 and host["seconds"] > 0 and host["cpus"] and host["load1_mean"] is not None
        assert host["other_cores_mean"] is not None and host["own_cores_mean"] is not None
    # the hog is another process: its core counts as other processes' CPU, never as edgefarm's
    assert _host(loaded)["other_cores_mean"] > 0.5, _host(loaded)

    said = "LOADED: this host: other processes used"
    for fmt, name in (("md", "report.md"), ("html", "report.html")):
        assert said in (loaded / name).read_text(), fmt
    term = edgefarm("report", str(loaded), "--format", "term")
    assert said in " ".join(term.stdout.split()) and "conditions: this host: other processes" in term.stdout
    assert json.loads((loaded / "report.json").read_text())["run"]["conditions"]["host"] == _host(loaded)

    c = edgefarm("compare", str(quiet), str(loaded))
    text = " ".join(c.stdout.split())
    assert c.returncode == 0, c.stderr
    assert "CONDITIONS: " in text and f"during {loaded.name}: {said}" in text, c.stdout
    as_json = json.loads(edgefarm("compare", str(loaded), str(again), "--format", "json").stdout)
    assert any(x.startswith(f"during {loaded.name}: {said}") for x in as_json["conditions"]), as_json[
        "conditions"
    ]
