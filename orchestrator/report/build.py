"""The combined report of a run folder: each device's row and samples from its files (or from what
this process has just written, `edgefarm run`), combined (combine.py) and written as report.json,
report.md and report.html (printers.py). `edgefarm report` rebuilds it from the files alone."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from android_runner.contract import SampleResult, read_results

from ..datasets.types import Dataset
from ..errors import ConfigError
from ..fsutil import write_text_atomic
from ..measure import describe
from ..run.run_json import RunJson
from ..run.types import DeviceOutcome
from ..rundir import device_folder, read_json_file, read_outcome, read_run_record
from ..stats import Resamples
from ..sustain import curve as sustain_curve
from .combine import as_record, build_report, device_row, sample_rows
from .media import with_samples
from .printers import PRINTERS
from .types import RunReport


def load_report(
    run_dir: Path,
    written: Mapping[str, Sequence[SampleResult]] | None = None,
    scored: Mapping[str, Mapping[str, Any]] | None = None,
    run: RunJson | None = None,
) -> RunReport:
    """Rebuild the combined report from the files of a run folder (what `edgefarm report` does).

    `written`: device name -> the rows this process has just written to that device's results.jsonl
    (`edgefarm run`), used instead of reading them back: 3,200 rows of 16 phones took 0.15 s to parse;
    `scored`: device name -> the report.json it has just written there, likewise (16 x 200 scored
    samples: 16 files of ~100 KB read, parsed and depth-checked again); `run`: its run.json as the run
    has just written it, likewise."""
    try:
        return _load_report(run_dir, written or {}, scored or {}, run or read_run_record(run_dir))
    except OSError as e:  # a file of the run folder that is there but cannot be read
        raise ConfigError(
            f"cannot read {e.filename or run_dir}: {e.strerror or e}",
            where=str(e.filename or run_dir),
            fix="check the run folder's permissions (or copy it whole again)",
        ) from e


def _load_report(
    run_dir: Path,
    written: Mapping[str, Sequence[SampleResult]],
    scored: Mapping[str, Mapping[str, Any]],
    run: RunJson,
) -> RunReport:
    rows, per_device, curves = [], {}, {}
    expected = run.dataset.samples_run  # a device with fewer rows is partial (never marked best)
    draws = Resamples()  # the intervals' bootstrap, drawn once for every device
    for name in run.devices:
        dev_dir = device_folder(run_dir, name)
        device = read_json_file(dev_dir / "device.json") or {"name": name}
        outcome = read_outcome(dev_dir) or DeviceOutcome(name=name, kind="", error="no outcome recorded")
        results = (
            list(written[name]) if name in written else list(read_results(str(dev_dir / "results.jsonl")))
        )
        written_report = scored.get(name)
        report = as_record(  # read once: the device row and the samples
            written_report if written_report is not None else read_json_file(dev_dir / "report.json")
        )
        stood = [  # rows this board ran standing in for a phone: in the phone's column, and in its figures
            r
            for s in run.stand_ins or ()
            if s.get("board") == name
            for r in read_results(str(device_folder(run_dir, str(s.get("folder", ""))) / "results.jsonl"))
        ]
        extra = dev_dir / "repeats.jsonl"  # --repeat: runs 2..N of each sample, in the latency figures
        repeats = list(read_results(str(extra))) if extra.is_file() else []
        if (passes := sustain_curve(results + repeats)) is not None:  # --sustain
            curves[device.get("name", name)] = passes.to_json()
        over = _figures_over(run, len(results))
        row = device_row(device, outcome, results + stood, report, repeats, over, draws, expected)
        rows.append(dataclasses.replace(row, folder=dev_dir.name))
        per_device[device.get("name", name)] = (results, report)
    # the run's end, unless run.json has it
    ends = [p.stat().st_mtime for p in run_dir.glob("devices/*/outcome.json")]
    finished = datetime.fromtimestamp(max(ends), timezone.utc).isoformat(timespec="seconds") if ends else ""
    report = build_report(run, rows, sample_rows(per_device), run.unusable, run.notes, finished_at=finished)
    return dataclasses.replace(report, sustain=curves) if curves else report


def _figures_over(run: RunJson, samples: int) -> str:
    """--repeat / --warmup of the run (run.json flags): what a device's latency figures are over."""
    repeat, warmup, sustain = run.int_flag("repeat", 1), run.int_flag("warmup", 0), run.int_flag("sustain", 1)
    ok = repeat is not None and warmup is not None and sustain is not None
    return describe(samples, repeat, warmup, sustain) if ok else ""


def write_reports(run_dir: Path, report: RunReport, dataset: Dataset | None = None) -> dict[str, Path]:
    """report.json/md/html; `dataset`: the run's own, when the caller has it loaded (else read again)."""
    report = with_samples(report, run_dir, dataset=dataset)  # the drill-down's prompts; media under media/
    paths = {}
    for fmt, name in (("json", "report.json"), ("md", "report.md"), ("html", "report.html")):
        write_text_atomic(run_dir / name, PRINTERS.get(fmt)(report))
        paths[fmt] = run_dir / name
    return paths
