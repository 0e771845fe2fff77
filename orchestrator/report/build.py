"""The combined report of a run folder: each device's row and samples from its files (or from what
this process has just written, `edgefarm run`), combined (combine.py) and written as report.json,
report.md and report.html (printers.py). `edgefarm report` rebuilds it from the files alone."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from android_runner.contract import SampleResult, read_results

from ..datasets.types import Dataset
from ..devices.types import DeviceInfo
from ..errors import ConfigError
from ..farm.run_json import RunJson
from ..farm.rundir import device_folder, read_json_file, read_outcome, read_run_record
from ..farm.types import DeviceOutcome
from ..fsutil import write_text_atomic
from ..measure import base_id, describe
from ..stats import Resamples
from ..sustain import curve as sustain_curve
from .combine import as_record, build_report, device_row, sample_rows
from .conditions import settle_records, thermal_text, unsettled_text
from .media import with_samples
from .printers import PRINTERS
from .types.run_report import RunReport
from .units import unit_groups


def load_report(
    run_dir: Path, run: RunJson | None = None, settled: Mapping[str, DeviceOutcome] | None = None
) -> RunReport:
    """The combined report of a run folder: from its files alone (`edgefarm report`), or (`edgefarm
    run`) from `run`, the run.json record it has just written, and `settled`: device name -> the
    outcome of a device that ran without trouble (its rows, score and device info as the session made
    them, not read back: 3,200 rows of 16 phones took 0.15 s to parse, their 16 report.json of ~100 KB
    as long again). Every other device of the run is read from its folder."""
    try:
        return _load_report(run_dir, run or read_run_record(run_dir), settled or {})
    except OSError as e:  # a file of the run folder that is there but cannot be read
        raise ConfigError(
            f"cannot read {e.filename or run_dir}: {e.strerror or e}",
            where=str(e.filename or run_dir),
            fix="check the run folder's permissions (or copy it whole again)",
        ) from e


def _device_info(dev_dir: Path, name: str, kind: str = "") -> DeviceInfo:
    """The device's info from its folder's device.json; without one, just its name (and `kind`)."""
    found = read_json_file(dev_dir / "device.json")
    return DeviceInfo.from_dict(found) if isinstance(found, dict) else DeviceInfo(name=name, kind=kind)


def _device(
    dev_dir: Path, name: str, settled: DeviceOutcome | None
) -> tuple[DeviceInfo, DeviceOutcome, list[SampleResult], Any]:
    """A device's info, outcome, rows and score: the settled outcome's, else its folder's files."""
    if settled is not None and settled.info is not None:
        return settled.info, settled, list(settled.results), settled.report
    outcome = read_outcome(dev_dir) or DeviceOutcome(name=name, kind="", error="no outcome recorded")
    return (
        _device_info(dev_dir, name, outcome.kind),
        outcome,
        list(read_results(str(dev_dir / "results.jsonl"))),
        read_json_file(dev_dir / "report.json"),
    )


def _load_report(run_dir: Path, run: RunJson, settled: Mapping[str, DeviceOutcome]) -> RunReport:
    rows, per_device, curves = [], {}, {}
    expected = run.dataset.samples_run  # a device with fewer rows is partial (never marked best)
    draws = Resamples()  # the intervals' bootstrap, drawn once for every device
    for name in run.devices:
        dev_dir = device_folder(run_dir, name)
        device, outcome, results, scored = _device(dev_dir, name, settled.get(name))
        report = as_record(scored)  # read once: the device row and the samples
        stood = [  # rows this board ran standing in for a phone: in the phone's column, and in its figures
            r
            for s in run.stand_ins or ()
            if s.board == name
            for r in read_results(str(device_folder(run_dir, s.folder) / "results.jsonl"))
        ]
        extra = dev_dir / "repeats.jsonl"  # --repeat: runs 2..N of each sample, in the latency figures
        repeats = list(read_results(str(extra))) if extra.is_file() else []
        if (passes := sustain_curve(results + repeats)) is not None:  # --sustain
            curves[device.name or name] = passes.to_json()
        over = _figures_over(run, expected or len(results), len(results) + len(repeats))
        row = device_row(device, outcome, results + stood, report, repeats, over, draws, expected)
        warm = dev_dir / "warmup.jsonl"  # --settle's record is on the block's first row, a warm-up's too
        settles = settle_records([*(read_results(str(warm)) if warm.is_file() else ()), *results, *repeats])
        rows.append(dataclasses.replace(row, folder=dev_dir.name, settle=settles, unsettled=unsettled_text(settles),
                                        thermal=thermal_text([*results, *repeats])))  # fmt: skip
        per_device[device.name or name] = (results, report)
    finished = run.finished_at or _last_outcome_written(run_dir)  # the run's end, unless run.json has it
    report = build_report(run, rows, sample_rows(per_device), run.unusable, run.notes, finished_at=finished)
    report = dataclasses.replace(report, sustain=curves) if curves else report
    return dataclasses.replace(report, units=unit_groups(run.units, report)) if run.units else report


def measured_runs(run_dir: Path) -> dict[str, dict[str, tuple[SampleResult, ...]]]:
    """Every measured run of each sample on each device of a run folder (device -> sample id -> its
    runs in run order: the first pass, then --repeat's or --sustain's; warm-ups left out), keyed as the
    report's cells are: what `edgefarm ab` takes a block's figures from."""
    run = read_run_record(run_dir)
    out: dict[str, dict[str, tuple[SampleResult, ...]]] = {}
    for name in run.devices:
        dev_dir = device_folder(run_dir, name)
        key = _device_info(dev_dir, name).name or name
        runs: dict[str, list[SampleResult]] = {}
        for file in ("results.jsonl", "repeats.jsonl"):  # repeats.jsonl: passes 2..N, in run order
            for r in read_results(str(dev_dir / file)):
                runs.setdefault(base_id(r.id), []).append(r)
        out[key] = {i: tuple(rs) for i, rs in runs.items()}
    return out


def _last_outcome_written(run_dir: Path) -> str:
    ends = [p.stat().st_mtime for p in run_dir.glob("devices/*/outcome.json")]
    return datetime.fromtimestamp(max(ends), timezone.utc).isoformat(timespec="seconds") if ends else ""


def _figures_over(run: RunJson, samples: int, runs: int) -> str:
    """--repeat / --warmup of the run (run.json flags): what a device's latency figures are over (`runs`:
    the measured runs it has, fewer than asked when the run was interrupted)."""
    repeat, warmup, sustain = run.int_flag("repeat", 1), run.int_flag("warmup", 0), run.int_flag("sustain", 1)
    ok = repeat is not None and warmup is not None and sustain is not None
    return describe(samples, repeat, warmup, sustain, runs) if ok else ""


def write_reports(run_dir: Path, report: RunReport, dataset: Dataset | None = None) -> dict[str, Path]:
    """report.json/md/html; `dataset`: the run's own, when the caller has it loaded (else read again)."""
    report = with_samples(report, run_dir, dataset=dataset)  # the drill-down's prompts; media under media/
    paths = {}
    for fmt, name in (("json", "report.json"), ("md", "report.md"), ("html", "report.html")):
        write_text_atomic(run_dir / name, PRINTERS.get(fmt)(report))
        paths[fmt] = run_dir / name
    return paths
