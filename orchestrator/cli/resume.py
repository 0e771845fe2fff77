"""`edgefarm run --resume RUN_DIR`: the selection comes from the run's run.json; flags given again must agree.

A flag the user typed (click's parameter source is the command line) is compared with the recorded
value and refused when it differs; every other selection flag takes the recorded value, so
`edgefarm run --resume runs/<run-id>` alone continues the run exactly as it was asked.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from ..errors import ConfigError
from ..redact import MASK, is_redacted, redact


@dataclass(frozen=True)
class Recorded:
    param: str  # click parameter name in `edgefarm run`
    flag: str  # as the user types it
    key: str  # key in run.json "flags" (model/dataset: their own sections)


RECORDED = (
    Recorded("device_spec", "--devices", "devices"),
    Recorded("cluster", "--cluster", "cluster"),
    Recorded("inventory", "--inventory", "inventory"),
    Recorded("model", "--model", "model.path"),
    Recorded("dataset_spec", "--dataset", "dataset.path"),
    Recorded("fmt", "--format", "format"),
    Recorded("subset", "--subset", "subset"),
    Recorded("limit", "--limit", "limit"),
    Recorded("per_modality", "--per-modality", "per_modality"),
    Recorded("modalities", "--modality", "modality"),
    Recorded("max_output_tokens", "--max-output-tokens", "max_output_tokens"),
    Recorded("max_num_tokens", "--max-num-tokens", "max_num_tokens"),
    Recorded("backend", "--backend", "backend"),
    Recorded("threads", "--threads", "threads"),
    Recorded("sample_timeout_s", "--sample-timeout", "sample_timeout_s"),
    Recorded("cooldown_c", "--cooldown-c", "cooldown_c"),
    Recorded("cooldown_max_s", "--cooldown-max-s", "cooldown_max_s"),
    Recorded("settle", "--settle", "settle"),
    Recorded("settle_c", "--settle-c", "settle_c"),
    Recorded("settle_s", "--settle-s", "settle_s"),
    Recorded("settle_max_s", "--settle-max-s", "settle_max_s"),
    Recorded("judge_url", "--judge", "judge_url"),
    Recorded("judge_model", "--judge-model", "judge_model"),
    Recorded("fidelity", "--fidelity", "fidelity"),
    Recorded("reference", "--reference", "reference"),
)
_PATHS = {"inventory", "model"}  # compared as files, not as spellings


def _recorded_value(run: Mapping[str, Any], key: str) -> tuple[bool, Any]:
    """(found, value) of a dotted key in run.json (`flags` for plain keys)."""
    if "." in key:
        section, field = key.split(".", 1)
        holder = run.get(section)
    else:
        holder, field = run.get("flags"), key
    if not isinstance(holder, Mapping) or field not in holder:
        return False, None
    return True, holder[field]


def _same(param: str, given: Any, recorded: Any) -> bool:
    if param == "modalities":
        return list(given or ()) == list(recorded or ())
    if param in _PATHS and given is not None and recorded is not None:
        return Path(str(given)).expanduser().resolve() == Path(str(recorded)).expanduser().resolve()
    if isinstance(given, Path):
        given = str(given)
    if isinstance(given, str) and is_redacted(given):
        return redact(given) == recorded  # run.json keeps the value with its secrets masked
    return given == recorded


def _show(value: Any) -> str:
    if value is None or value == [] or value == ():
        return "(not set)"
    if isinstance(value, (list, tuple)):
        return " ".join(map(str, value))
    return json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value


def resumed_params(ctx: click.Context, run: Mapping[str, Any], where: Path) -> dict[str, Any]:
    """The run's parameters for a resume: recorded values, with typed flags checked against them."""
    params = dict(ctx.params)
    for r in RECORDED:
        found, recorded = _recorded_value(run, r.key)
        typed = ctx.get_parameter_source(r.param) == ParameterSource.COMMANDLINE
        if typed:
            if found and not _same(r.param, params[r.param], recorded):
                raise ConfigError(
                    f"{r.flag} {_show(params[r.param])} differs from this run's recorded "
                    f"{r.flag} {_show(recorded)}",
                    where=f"{where / 'run.json'} field '{r.key}'",
                    fix=f"leave {r.flag} out (the run continues with what it recorded), "
                    "or start a new run without --resume",
                )
            continue
        if not found:
            continue  # recorded by an older edgefarm: the flag's own default
        if isinstance(recorded, str) and MASK in recorded:
            raise ConfigError(
                f"the recorded {r.flag} held a secret, which run.json does not keep: {recorded}",
                where=f"{where / 'run.json'} field '{r.key}'",
                fix=f"pass {r.flag} again with its full value (the same as the first run's)",
            )
        params[r.param] = _checked(ctx, r, recorded, where)
    return params


def _checked(ctx: click.Context, r: Recorded, recorded: Any, where: Path) -> Any:
    """A recorded value through the flag's own click type (run.json is input like any other)."""
    param = next(p for p in ctx.command.params if p.name == r.param)
    if recorded is None:
        return () if getattr(param, "multiple", False) else None
    try:
        return param.type_cast_value(ctx, recorded)
    except (click.BadParameter, TypeError, ValueError) as e:
        raise ConfigError(
            f"recorded {r.flag} {_show(recorded)[:80]} is not a valid value: {getattr(e, 'message', e)}",
            where=f"{where / 'run.json'} field '{r.key}'",
            fix="resume only folders written by `edgefarm run`, or start a new run",
        ) from None
