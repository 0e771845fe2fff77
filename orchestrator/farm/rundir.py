"""The run directory: run.json and one folder per device, each file with its reader and writer (written
atomically). The combined report built from them is report/build.py."""

from __future__ import annotations

import json
import os
import platform
import re
import secrets
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..bundled import REPO_ROOT
from ..errors import ConfigError, OutputError
from ..fsutil import make_new_dir, write_json_atomic
from ..jsonio import DOCUMENT, read_json
from .run_json import KNOWN_SCHEMAS, RunJson
from .types import DeviceOutcome


def new_run_id(now: datetime) -> str:
    return now.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)


def device_folder(run_dir: Path, device_name: str) -> Path:
    # `@`: a device x backend unit's folder (devices/units.py: pixel-8@gpu)
    safe = re.sub(r"[^A-Za-z0-9._@-]", "_", device_name)[:72] or "device"
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


def write_run_json(run_dir: Path, run: RunJson) -> None:
    """run.json, the one writer of a run's (RunJson.to_dict, its codec)."""
    write_json_atomic(run_dir / "run.json", run.to_dict())


def read_run_record(run_dir: Path, *, own_folder: bool = False) -> RunJson:
    """run.json of a run folder as its record (`edgefarm report`, --resume), checked as read_run_json."""
    return RunJson.from_dict(read_run_json(run_dir, own_folder=own_folder))


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
    _require_known_schema(run, path)
    if own_folder and Path(run_dir).resolve().name != run_id:
        raise ConfigError(
            f"run_id {run_id!r} does not name this folder ({Path(run_dir).resolve().name!r})",
            where=f"{path} field 'run_id'",
            fix="pass the run's own folder runs/<run_id>; a renamed or copied run folder cannot be resumed",
        )
    return run


def _require_known_schema(run: dict[str, Any], path: Path) -> None:
    """A run.json whose schema_version this edgefarm does not read is refused (its fields may mean
    something else); a file without one is an older edgefarm's (version 1)."""
    schema = run.get("schema_version", KNOWN_SCHEMAS[0])
    if isinstance(schema, int) and not isinstance(schema, bool) and schema in KNOWN_SCHEMAS:
        return
    wrote = run.get("versions", {}).get("edgefarm") if isinstance(run.get("versions"), dict) else None
    known = ", ".join(map(str, KNOWN_SCHEMAS))
    raise ConfigError(
        f"schema_version {json.dumps(schema, ensure_ascii=True)[:40]} is not a run.json layout this "
        f"edgefarm reads (it reads schema_version {known})",
        where=f"{path} field 'schema_version'",
        fix=f"read this run with the edgefarm that wrote it{f' (edgefarm {wrote})' if isinstance(wrote, str) else ''}"
        ", or upgrade edgefarm; a hand-edited run.json: restore its schema_version",
    )


def write_outcome(dev_dir: Path, outcome: DeviceOutcome) -> None:
    write_json_atomic(dev_dir / "outcome.json", outcome.to_dict())


def read_outcome(dev_dir: Path) -> DeviceOutcome | None:
    """outcome.json of a device folder (an earlier session of the run), or None when there is none."""
    data = read_json_file(dev_dir / "outcome.json")
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


def read_json_file(path: Path) -> Any:
    """A JSON document of the run folder, or None when the file is not there."""
    if not path.is_file():
        return None
    return read_json(path, DOCUMENT, error=ConfigError, fix="re-run the run with --resume to rewrite it")


def utc_now() -> datetime:
    return datetime.now(timezone.utc)
