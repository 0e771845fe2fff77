"""The run directory: run.json, one folder per device, the combined reports. Written atomically."""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import re
import secrets
import subprocess
import sys
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from android_runner.contract import SampleResult, read_results

from .bundled import REPO_ROOT
from .errors import ConfigError, OutputError
from .fsutil import make_new_dir, write_json_atomic, write_text_atomic
from .jsonio import DOCUMENT, read_json
from .run.types import DeviceOutcome

if TYPE_CHECKING:
    from .datasets.types import Dataset
    from .report.types import RunReport


def new_run_id(now: datetime) -> str:
    return now.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)


def device_folder(run_dir: Path, device_name: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", device_name)[:64] or "device"
    return run_dir / "devices" / safe


def versions() -> dict[str, str]:
    """The run stamp's package versions and edgefarm's git revision."""
    from importlib import metadata

    out = {"python": sys.version.split()[0]}
    for dist in ("edgefarm", "litert-lm-api", "adbutils", "asyncssh"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    try:
        rev = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            check=False,
            text=True,
            timeout=5,
        )
        if rev.returncode == 0:
            out["edgefarm_git"] = rev.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return out


def host_info() -> dict[str, Any]:
    return {"hostname": platform.node(), "platform": platform.platform(), "cpus": os.cpu_count()}


def write_run_json(run_dir: Path, run: Mapping[str, Any]) -> None:
    write_json_atomic(run_dir / "run.json", dict(run))


RUN_ID = re.compile(r"\A[0-9]{8}-[0-9]{6}-[0-9a-f]{4,}\Z")  # what new_run_id makes: ASCII only, no "\n" after
_RUN_FIX = "pass a folder made by `edgefarm run` (runs/<run-id>), untouched"


def read_run_json(run_dir: Path, *, own_folder: bool = False) -> dict[str, Any]:
    """run.json of a run folder, checked: a JSON object within bounds with a run_id edgefarm makes;
    with own_folder (--resume, which writes into the folder), that run_id must also be the folder's name."""
    path = Path(run_dir) / "run.json"
    if not path.is_file():
        raise ConfigError(f"no run.json in {run_dir}", where=str(run_dir), fix=_RUN_FIX)
    run = read_json(path, DOCUMENT, error=ConfigError, fix=_RUN_FIX)
    if not isinstance(run, dict):
        raise ConfigError("run.json is not a JSON object", where=str(path), fix=_RUN_FIX)
    run_id = run.get("run_id")
    if not isinstance(run_id, str) or not RUN_ID.match(run_id):
        shown = json.dumps(run_id, ensure_ascii=True)[:80]
        raise ConfigError(
            f"run_id {shown} is not a run id edgefarm makes (YYYYMMDD-HHMMSS-hex)",
            where=f"{path} field 'run_id'",
            fix=_RUN_FIX,
        )
    if own_folder and Path(run_dir).resolve().name != run_id:
        raise ConfigError(
            f"run_id {run_id!r} does not name this folder ({Path(run_dir).resolve().name!r})",
            where=f"{path} field 'run_id'",
            fix="pass the run's own folder runs/<run_id>; a renamed or copied run folder cannot be resumed",
        )
    return run


def write_outcome(dev_dir: Path, outcome: DeviceOutcome) -> None:
    write_json_atomic(dev_dir / "outcome.json", outcome.to_dict())


def read_outcome(dev_dir: Path) -> DeviceOutcome | None:
    """outcome.json of a device folder (an earlier session of the run), or None when there is none."""
    data = _read_json(dev_dir / "outcome.json")
    return DeviceOutcome.from_dict(data) if isinstance(data, dict) else None


def new_run_dir(out: Path, attempts: int = 50) -> tuple[str, Path, str]:
    """(run id, its new folder, start time): the folder is created here and never shared with another
    run started the same second (a name collision takes a new id)."""
    for _ in range(attempts):
        now = utc_now()
        run_id = new_run_id(now)
        if make_new_dir(out / run_id):
            return run_id, out / run_id, now.isoformat(timespec="seconds")
    raise OutputError(
        f"{attempts} new run folder names in {out} were all taken",
        where=str(out),
        fix="check what keeps creating folders there, or pass another --out",
    )


def _read_json(path: Path) -> Any:
    if not path.is_file():
        return None
    return read_json(path, DOCUMENT, error=ConfigError, fix="re-run the run with --resume to rewrite it")


def load_report(
    run_dir: Path,
    written: Mapping[str, Sequence[SampleResult]] | None = None,
    scored: Mapping[str, Mapping[str, Any]] | None = None,
) -> RunReport:
    """Rebuild the combined report from the files of a run folder (what `edgefarm report` does).

    `written`: device name -> the rows this process has just written to that device's results.jsonl
    (`edgefarm run`), used instead of reading them back: 3,200 rows of 16 phones took 0.15 s to parse;
    `scored`: device name -> the report.json it has just written there, likewise (16 x 200 scored
    samples: 16 files of ~100 KB read, parsed and depth-checked again)."""
    try:
        return _load_report(run_dir, written or {}, scored or {})
    except OSError as e:  # a file of the run folder that is there but cannot be read
        raise ConfigError(
            f"cannot read {e.filename or run_dir}: {e.strerror or e}",
            where=str(e.filename or run_dir),
            fix="check the run folder's permissions (or copy it whole again)",
        ) from e


def _load_report(
    run_dir: Path, written: Mapping[str, Sequence[SampleResult]], scored: Mapping[str, Mapping[str, Any]]
) -> RunReport:
    from .report.combine import as_record, build_report, device_row, sample_rows  # the report's stage
    from .stats import Resamples

    run = read_run_json(run_dir)
    from .sustain import curve as sustain_curve

    rows, per_device, curves = [], {}, {}
    draws = Resamples()  # the intervals' bootstrap, drawn once for every device
    for name in run.get("devices", []):
        dev_dir = device_folder(run_dir, name)
        device = _read_json(dev_dir / "device.json") or {"name": name}
        outcome = read_outcome(dev_dir) or DeviceOutcome(name=name, kind="", error="no outcome recorded")
        results = (
            list(written[name]) if name in written else list(read_results(str(dev_dir / "results.jsonl")))
        )
        written_report = scored.get(name)
        report = as_record(  # read once: the device row and the samples
            written_report if written_report is not None else _read_json(dev_dir / "report.json")
        )
        stood = [  # rows this board ran standing in for a phone: in the phone's column, and in its figures
            r
            for s in run.get("stand_ins") or []
            if isinstance(s, dict) and s.get("board") == name
            for r in read_results(str(device_folder(run_dir, str(s.get("folder", ""))) / "results.jsonl"))
        ]
        extra = dev_dir / "repeats.jsonl"  # --repeat: runs 2..N of each sample, in the latency figures
        repeats = list(read_results(str(extra))) if extra.is_file() else []
        if (passes := sustain_curve(results + repeats)) is not None:  # --sustain
            curves[device.get("name", name)] = passes.to_json()
        over = _figures_over(run, len(results))
        row = device_row(device, outcome, results + stood, report, repeats, over, draws)
        rows.append(dataclasses.replace(row, folder=dev_dir.name))
        per_device[device.get("name", name)] = (results, report)
    # the run's end, unless run.json has it
    ends = [p.stat().st_mtime for p in run_dir.glob("devices/*/outcome.json")]
    finished = datetime.fromtimestamp(max(ends), timezone.utc).isoformat(timespec="seconds") if ends else ""
    report = build_report(
        run,
        rows,
        sample_rows(per_device),
        run.get("unusable", []),
        run.get("notes", []),
        finished_at=finished,
    )
    return dataclasses.replace(report, sustain=curves) if curves else report


def _figures_over(run: Mapping[str, Any], samples: int) -> str:
    """--repeat / --warmup of the run (run.json flags): what a device's latency figures are over."""
    from .measure import describe

    flags = run.get("flags") if isinstance(run.get("flags"), Mapping) else {}
    repeat, warmup, sustain = flags.get("repeat") or 1, flags.get("warmup") or 0, flags.get("sustain") or 1
    ok = isinstance(repeat, int) and isinstance(warmup, int) and isinstance(sustain, int)
    return describe(samples, repeat, warmup, sustain) if ok else ""


def write_reports(run_dir: Path, report: RunReport, dataset: Dataset | None = None) -> dict[str, Path]:
    """report.json/md/html; `dataset`: the run's own, when the caller has it loaded (else read again)."""
    from .report.media import with_samples
    from .report.printers import PRINTERS

    report = with_samples(report, run_dir, dataset=dataset)  # the drill-down's prompts; media under media/
    paths = {}
    for fmt, name in (("json", "report.json"), ("md", "report.md"), ("html", "report.html")):
        write_text_atomic(run_dir / name, PRINTERS.get(fmt)(report))
        paths[fmt] = run_dir / name
    return paths


def utc_now() -> datetime:
    return datetime.now(timezone.utc)
