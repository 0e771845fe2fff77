"""The user's story: `edgefarm devices` and `edgefarm run --devices all` over three phones on two farm hosts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
PHONES = {"google-pixel-8": "Pixel 8", "samsung-sm-s921b": "SM-S921B", "redmi-note-13": "23021RAAEG"}


def edgefarm(lab, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = lab.env(COLUMNS="200", EDGEFARM_PHONE_RUNNER="upstream")
    env.pop("EDGEFARM_INVENTORY", None)
    return subprocess.run([sys.executable, "-m", "orchestrator", *args], check=False, capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=REPO)  # fmt: skip


def inventory(lab, tmp_path: Path) -> Path:
    """Farm host 2 listed as a remote adb server; farm host 1 is the local server (env)."""
    path = tmp_path / "devices.yaml"
    path.write_text(f"adb_servers: [127.0.0.1:{lab.servers[1].port}]\n")
    return path


def test_edgefarm_devices_lists_every_phone_on_both_farm_hosts(adb_lab, tmp_path):
    p = edgefarm(adb_lab, "devices", "--inventory", str(inventory(adb_lab, tmp_path)), "--json")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    by_name = {d["name"]: d for d in data["devices"]}
    assert set(PHONES) <= set(by_name)
    for name, model in PHONES.items():
        assert by_name[name]["model"] == model and by_name[name]["kind"] == "adb"
    assert by_name["redmi-note-13"]["extra"]["server"] == f"127.0.0.1:{adb_lab.servers[1].port}"
    assert by_name["google-pixel-8"]["soc"] == "Google Tensor G3"


def test_run_all_phones_in_parallel_then_rerun_pushes_no_model_bytes(adb_lab, tmp_path):
    inv = inventory(adb_lab, tmp_path)
    out = tmp_path / "runs"
    args = ["run", "--devices", "all", "--inventory", str(inv), "--per-modality", "1", "--max-output-tokens", "12",
            "--sample-timeout", "60", "--out", str(out)]  # fmt: skip
    first = edgefarm(adb_lab, *args)
    assert first.returncode == 0, first.stderr[-3000:]
    second = edgefarm(adb_lab, *args)
    assert second.returncode == 0, second.stderr[-3000:]

    runs = sorted(p for p in out.iterdir() if p.is_dir())
    assert len(runs) == 2
    for i, run_dir in enumerate(runs):
        combined = json.loads((run_dir / "report.json").read_text())
        text = json.dumps(combined)
        for name in PHONES:
            dev_dir = run_dir / "devices" / name
            assert (dev_dir / "report.json").is_file(), f"{name}: no per-device report in {run_dir}"
            results = [
                json.loads(x) for x in (dev_dir / "results.jsonl").read_text().splitlines() if x.strip()
            ]
            assert results and all(r["status"] in ("ok", "unsupported") for r in results), results
            ok = [r for r in results if r["status"] == "ok"]
            assert ok and all(r["ttft_ms"] is not None and r["peak_rss_mb"] for r in ok)
            outcome = json.loads((dev_dir / "outcome.json").read_text())
            if i == 1:
                assert outcome["model_push"]["bytes_sent"] == 0, (name, outcome)
                assert outcome["model_push"]["files_skipped"] == 1
            assert name in text
        assert (run_dir / "report.md").read_text().count("|") > 10
    md = (runs[1] / "report.md").read_text()
    assert all(name in md for name in PHONES)
    # the run built its report from the rows and scores it held (report.build.load_report's written/scored);
    # `edgefarm report` rebuilds it from the folder's files: the same report
    for fmt, name in (("json", "report.json"), ("md", "report.md")):
        again = edgefarm(adb_lab, "report", str(runs[1]), "--format", fmt)
        assert again.returncode == 0, again.stderr[-3000:]
        assert again.stdout == (runs[1] / name).read_text(), fmt
