"""Energy on lab phones whose fuel gauge follows the phone's real CPU use and updates every 0.25-1 s.

Five gauges (tests/lab/adb/gauge.py), each checked against the exact integral of its own load over
each sample's window (the window from the lab `dumpsys` call log: the hook's calls bracket it):
- google-pixel-8: uA, discharge negative, current_now, 0.25 s
- samsung-sm-s921b: mA/mV, discharge positive, 0.5 s: its unit must be proven by the charge counter
- redmi-note-13: current_avg, on the charger (`Charging`, AC powered), 0.75 s
- google-pixel-8a: USB bypass (`Not charging`, USB powered, the battery gives ~5 mA), 0.25 s
- samsung-sm-s921x: sysfs closed, `dumpsys battery` only (`current now` in mA), 1 s
Per sample: trusted rows are within 5% of the truth on average per phone (one may stray to 10% on a loaded
host); every other row says why it is not trusted.
Per run: the pass's energy from the coulomb counter (outcome.json's runner record).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from .gauge import GaugeSpec, boottime
from .sandbox import GALAXY_S24, PIXEL_8

REPO = Path(__file__).resolve().parents[3]
GAUGES = {
    "pixel8": ("google-pixel-8", GaugeSpec(period_s=0.25)),
    "s24": ("samsung-sm-s921b", GaugeSpec(period_s=0.5, amps_per_unit=1e-3, volts_per_unit=1e-3, discharge_sign=1)),
    "redmi": (
        "redmi-note-13",
        GaugeSpec(period_s=0.75, file="current_avg", supply="charging", discharge_sign=1),
    ),
    "bypass": ("google-pixel-8a", GaugeSpec(period_s=0.25, supply="usb-bypass")),
    "closed": ("samsung-sm-s921x", GaugeSpec(period_s=1.0, file="")),
}
# The target (issue 22): trusted rows within 5% of the truth. Asserted as each phone's mean |error| over
# its trusted samples; one sample may stray to 10% on a loaded 2-core host, where the lab's gauge thread
# (it follows the phones' CPU time every 0.1 s) and the driver's readings are late by tens of ms.
TRUSTED_MEAN_ERROR_MAX = 0.05
TRUSTED_ERROR_MAX = 0.10
LIMIT = 3  # samples a phone: 3 x ~4 s upstream samples make a pass of 10+ s (the counter is trusted)


def edgefarm(lab, *args: str, **env_extra: str) -> subprocess.CompletedProcess:
    env = lab.env(COLUMNS="200", **env_extra)
    env.pop("EDGEFARM_INVENTORY", None)
    return subprocess.run([sys.executable, "-m", "orchestrator", *args], check=False, capture_output=True,
                          text=True, timeout=600, env=env, cwd=REPO)  # fmt: skip


@pytest.fixture(scope="module")
def gauged_lab(adb_lab):
    """The shared lab plus a USB-bypass Pixel and a sysfs-closed Samsung, for this module only."""
    adb_lab.add_phone("bypass", replace(PIXEL_8, props={**PIXEL_8.props, "ro.product.model": "Pixel 8a"}))
    closed = {**GALAXY_S24.props, "ro.product.model": "SM-S921X", "ro.product.name": "closed"}
    adb_lab.add_phone("closed", replace(GALAXY_S24, props=closed, power={}))
    try:
        yield adb_lab
    finally:
        for label in ("bypass", "closed"):
            adb_lab.remove_phone(label)


def _windows(lab, label: str, run_id: str, rows: list[dict]) -> dict[int, tuple[float, float]]:
    """Sample n -> the runner's own power window (start, end) on CLOCK_BOOTTIME, to integrate the truth
    over exactly what was measured: the native runner's `t0` (CLOCK_MONOTONIC) + `dt_s`; the upstream
    driver's last `power.tsv` append (the file's mtime) - `dt_s`; `dumpsys` only: from the hook's
    `thermal_before` to its `battery_after` (the files' mtimes on the phone's /data, a host folder)."""
    wall, mono = time.time() - boottime(), time.monotonic() - boottime()
    samples = lab.device_root(label) / "local" / "tmp" / "edgefarm" / "runs" / run_id / "job" / "samples"
    out = {}
    for n, r in enumerate(rows, 1):
        d, power = samples / str(n), r["power"]
        if power["src"].startswith("dumpsys"):
            out[n] = (
                (d / "thermal_before").stat().st_mtime - wall,
                (d / "battery_after").stat().st_mtime - wall,
            )
        elif (d / "power.tsv").exists():
            end = (d / "power.tsv").stat().st_mtime - wall
            out[n] = (end - power["dt_s"], end)
        else:
            out[n] = (power["t0"] - mono, power["t0"] - mono + power["dt_s"])
    return out


def _run(lab, tmp_path: Path, *extra: str, **env: str) -> tuple[Path, dict]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    inv = tmp_path / "devices.yaml"
    inv.write_text(f"adb_servers: [127.0.0.1:{lab.servers[1].port}]\n")
    out = tmp_path / "runs"
    names = ",".join(name for name, _ in GAUGES.values())
    with lab.gauges({label: spec for label, (_, spec) in GAUGES.items()}) as bank:
        p = edgefarm(lab, "run", "--devices", names, "--inventory", str(inv), "--modality", "text",
                     "--limit", str(LIMIT), "--sample-timeout", "60", "--out", str(out), *extra, **env)  # fmt: skip
        assert p.returncode == 0, p.stderr[-3000:]
    (run_dir,) = [d for d in out.iterdir() if d.is_dir()]
    checked = {}
    for label, (name, _) in GAUGES.items():
        rows = [
            json.loads(x) for x in (run_dir / "devices" / name / "results.jsonl").read_text().splitlines()
        ]
        assert [r["status"] for r in rows] == ["ok"] * LIMIT, rows
        gauge, wins = bank.gauges[label], _windows(lab, label, run_dir.name, rows)
        assert sorted(wins) == list(range(1, LIMIT + 1)), (label, wins)
        truth = [gauge.energy(*wins[n]) for n in sorted(wins)]
        checked[label] = (rows, truth, gauge, wins)
    return run_dir, checked


def _check(checked: dict, run_dir: Path, report: list[str]) -> dict[str, int]:
    trusted_counts = {}
    for label, (rows, truth, gauge, wins) in checked.items():
        name = GAUGES[label][0]
        trusted, errors = 0, []
        for r, exact in zip(rows, truth, strict=True):
            assert r["energy_j"] is not None, (label, r)  # flagged rows keep their figure
            err = r["energy_j"] / exact - 1
            report.append(f"{name} period {GAUGES[label][1].period_s} s: window {r['power']['dt_s']:.2f} s, "
                          f"{r['energy_j']:.4f} J vs exact {exact:.4f} J ({err:+.1%}) "
                          f"{'TRUSTED' if not r['energy_unreliable'] else 'flagged: ' + r['energy_unreliable']}")  # fmt: skip
            if not r["energy_unreliable"]:
                trusted += 1
                errors.append(abs(err))
                if abs(err) > TRUSTED_ERROR_MAX:
                    report.append(f"^^^ OUT OF BOUNDS: {label} {r['power']}")
        if errors and sum(errors) / len(errors) > TRUSTED_MEAN_ERROR_MAX:
            report.append(f"^^^ OUT OF BOUNDS: {label} mean |error| {sum(errors) / len(errors):.1%}")
        trusted_counts[label] = trusted
        outcome = json.loads((run_dir / "devices" / name / "outcome.json").read_text())
        pe = outcome["runner"].get("pass_energy")
        if pe is None:  # no `Charge counter` in this phone's dumpsys battery (the Redmi's minimal one)
            assert label in ("redmi", "closed"), (label, outcome["runner"])
            continue
        first, last = min(wins.values()), max(wins.values())
        exact_pass = gauge.energy(first[0], last[1])
        report.append(f"{name} pass (charge counter): {pe['energy_j']:.3f} J over {pe['span_s']:.2f} s vs exact "
                      f"{exact_pass:.3f} J ({pe['energy_j'] / exact_pass - 1:+.1%}); apportioned: "
                      f"{pe['apportioned'] or 'yes'}; {pe['unreliable'] or 'TRUSTED'}")  # fmt: skip
        if (
            label in ("pixel8", "s24") and not pe["unreliable"]
        ):  # the battery feeds the load: the counter's charge is the load's
            if abs(pe["energy_j"] / exact_pass - 1) > 0.10:
                report.append(f"^^^ OUT OF BOUNDS: pass of {label}")
        elif label not in ("pixel8", "s24"):
            assert "external power" in pe["apportioned"] and "external power" in pe["unreliable"], (label, pe)
    return trusted_counts


def _flags(checked: dict, label: str) -> list[str]:
    return [r["energy_unreliable"] for r in checked[label][0]]


def test_energy_per_sample_and_per_run_against_the_exact_integral(gauged_lab, tmp_path):
    """The upstream stand-in keeps a CPU busy 2.5 s per sample, so samples span 2+ gauge periods on the
    0.25 and 0.5 s gauges; the native runner's samples (~50 ms of the tiny model) are all shorter."""
    report: list[str] = []
    for label in GAUGES:
        (gauged_lab.device_root(label) / "local" / "tmp" / "edgefarm-lab-faults").write_text("spin 2.5\n")
    try:
        run_dir, checked = _run(gauged_lab, tmp_path / "upstream", EDGEFARM_PHONE_RUNNER="upstream")
    finally:
        for label in GAUGES:
            (gauged_lab.device_root(label) / "local" / "tmp" / "edgefarm-lab-faults").unlink()
    trusted = _check(checked, run_dir, report)
    for label in ("pixel8", "s24"):  # passes of 10+ s: the counter's figure is trusted
        outcome = json.loads((run_dir / "devices" / GAUGES[label][0] / "outcome.json").read_text())
        assert outcome["runner"]["pass_energy"]["unreliable"] == "", outcome["runner"]["pass_energy"]
    run_dir_n, checked_n = _run(gauged_lab, tmp_path / "native")
    trusted_n = _check(checked_n, run_dir_n, report)
    print("\n".join(report))
    assert not [x for x in report if "OUT OF BOUNDS" in x], "\n".join(report)
    # the discharging phones' long samples are trusted, and the mA phone's unit came from its counter
    assert trusted["pixel8"] == LIMIT and trusted["s24"] == LIMIT, report
    for label in ("redmi", "bypass", "closed"):
        assert trusted[label] == 0 and trusted_n[label] == 0
    assert all("external power (status Charging" in f for f in _flags(checked, "redmi"))
    assert all("Not charging" in f and "too small to be the load" in f for f in _flags(checked, "bypass"))
    assert all("period unknown" in f for f in _flags(checked, "closed"))
    # the native runner's ~50 ms samples: shorter than two updates of every gauge, none trusted
    assert sum(trusted_n.values()) == 0
    assert all("gauge update period unknown" in f for f in _flags(checked_n, "pixel8"))
    # (the mA phone's unit was proven by its counter over the upstream pass above: its rows were trusted;
    # the native pass, 3 samples of ~50 ms, moves the counter too little to prove it again, and says so)
