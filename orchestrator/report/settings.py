"""What two runs must share to be compared or merged, and the differences between them (pure).

`compare` and `report --merge` put figures side by side; they mean something only when the runs
evaluated the same model on the same samples with the same settings. Each difference is named with
both values; `--allow-different` compares anyway, the differences printed above the table."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import ConfigError
from .types.run_report import RunReport

ALLOW_FLAG = "--allow-different"


def _flags(r: RunReport) -> Mapping[str, Any]:
    flags = r.run.get("flags")
    return flags if isinstance(flags, Mapping) else {}


def _section(r: RunReport, key: str) -> Mapping[str, Any]:
    value = r.run.get(key)
    return value if isinstance(value, Mapping) else {}


def _rows(r: RunReport, field: str) -> str:
    values = sorted({str(v) for d in r.devices if (v := getattr(d, field)) not in (None, "")})
    return ", ".join(values) or "not recorded"


def _slice(r: RunReport) -> str:
    ids = _section(r, "dataset").get("sample_ids")
    ids = [str(i) for i in ids] if isinstance(ids, list) else [s.id for s in r.samples]
    if not ids:
        return "no samples"
    shown = ", ".join(ids[:3]) + (", …" if len(ids) > 3 else "")
    digest = hashlib.sha256("\n".join(ids).encode()).hexdigest()[:8]
    return f"{len(ids)} samples ({shown}; ids sha256 {digest})"


# what must be equal: label -> how to read it from a run's report
IDENTITY: tuple[tuple[str, Callable[[RunReport], str]], ...] = (
    ("model", lambda r: str(_section(r, "model").get("sha256") or "?")[:16]),
    ("dataset", lambda r: str(_section(r, "dataset").get("sha256") or "?")[:16]),
    ("dataset slice", _slice),
    ("token cap", lambda r: _rows(r, "max_output_tokens")),
    (
        "backend",
        lambda r: (
            _rows(r, "backend_requested")
            if any(d.backend_requested for d in r.devices)
            else str(_flags(r).get("backend") or "default")
        ),
    ),
    ("threads", lambda r: _rows(r, "threads")),
    (
        "runner",
        lambda r: _rows(r, "runner_kind") if any(d.runner_kind for d in r.devices) else _rows(r, "runner"),
    ),
    ("repeat", lambda r: str(_flags(r).get("repeat") or 1)),
    ("warmup", lambda r: str(_flags(r).get("warmup") or 0)),
    ("sustain", lambda r: str(_flags(r).get("sustain") or 1)),
    ("context (--max-num-tokens)", lambda r: str(_flags(r).get("max_num_tokens") or "default")),
    (
        "cooldown",
        lambda r: (
            f"{_flags(r).get('cooldown_c') or 'none'} C, at most {_flags(r).get('cooldown_max_s') or '-'} s"
            if _flags(r).get("cooldown_c")
            else "none"
        ),
    ),
    ("parallel local devices", lambda r: str(_flags(r).get("parallel_local") or "no")),
)


def differences(reports: Sequence[RunReport]) -> list[str]:
    """`token cap: 2 in RUN_A, 128 in RUN_B` for every setting the runs do not share."""
    out = []
    for label, read in IDENTITY:
        values = [read(r) for r in reports]
        if len(set(values)) > 1:
            out.append(
                f"{label}: " + ", ".join(f"{v} in {r.run_id}" for v, r in zip(values, reports, strict=True))
            )
    return out


def shared(reports: Sequence[RunReport]) -> list[str]:
    """`token cap 16`, ... for the settings every run shares (said in the table's header)."""
    out = []
    for label, read in IDENTITY:
        values = {read(r) for r in reports}
        if len(values) == 1 and label not in ("model", "dataset"):
            out.append(f"{label} {values.pop()}")
    return out


def require_same(reports: Sequence[RunReport], command: str, allow: bool) -> list[str]:
    """The differences (to print) when `allow`; else a ConfigError naming each with both values."""
    diffs = differences(reports)
    if diffs and not allow:
        raise ConfigError(
            f"the runs differ in {len(diffs)} setting(s) the figures depend on: " + "; ".join(diffs),
            where=command,
            fix=f"compare runs made with the same model, dataset selection and settings, or pass {ALLOW_FLAG} "
            "to compare anyway (the differences are printed above the table)",
        )
    return diffs
