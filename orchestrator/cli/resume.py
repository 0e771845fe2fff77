"""`edgefarm run --resume RUN_DIR` and `edgefarm bench --resume RUN_DIR`: the flags come from the
folder's run.json; flags given again must agree.

What a command records and a resume carries is ONE list: its request's recorded fields (run/recorded.py:
RunRequest, BenchRequest), each with its run.json key. For each, a flag the user typed (click's parameter source is the command line)
is compared with the recorded value and refused when it differs; every other one takes the recorded
value, so `edgefarm run --resume runs/<run-id>` alone continues the run exactly as it was asked
(--repeat, --warmup, --sustain, --fidelity, the token caps, the backend, the threads: all of them).
A record this edgefarm cannot honour (a flag it does not know, a value its flag does not take, a
secret run.json did not keep) is refused with the reason, never dropped.
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
from ..run.recorded import RecordedRequest
from ..run.types import RunRequest

_PATHS = {"inventory", "model"}  # compared as files, not as spellings
_NAMED = {"model", "dataset_spec"}  # not listed among the carried flags: the run names its model and dataset


@dataclass(frozen=True)
class Resumed:
    """The parameters a resume runs with, and what it says of them."""

    params: dict[str, Any]
    carried: tuple[str, ...]  # `--repeat 30`: each recorded flag not at its default, as the user types it
    defaulted: tuple[str, ...]  # flags the record lacks (an older edgefarm wrote it): their defaults


def _recorded_value(run: Mapping[str, Any], key: str) -> tuple[bool, Any]:
    """(found, value) of a dotted key in run.json (`bench.request.prompts`; `flags` for plain keys)."""
    *sections, name = key.split(".") if "." in key else ("flags", key)
    holder: Any = run
    for section in sections:
        holder = holder.get(section) if isinstance(holder, Mapping) else None
    if not isinstance(holder, Mapping) or name not in holder:
        return False, None
    return True, holder[name]


COMMANDS = {"run": "edgefarm run", "bench": "edgefarm bench"}  # run.json `kind` -> the command that resumes it


def _same_kind(run: Mapping[str, Any], kind: str, where: Path) -> None:
    """A folder is resumed by the command that made it (run.json `kind`; none: a run)."""
    found = run.get("kind") or "run"
    if found != kind:
        other = COMMANDS.get(str(found))
        raise ConfigError(
            f"{where} is {'an `' + other + '` folder' if other else f'a folder of kind {found!r}'}, not one "
            f"`{COMMANDS[kind]}` made",
            where=f"{where / 'run.json'} field 'kind'",
            fix=f"continue it with `{other} --resume {where}`" if other else f"pass a folder `{COMMANDS[kind]}` made",
        )


def _same(name: str, given: Any, recorded: Any) -> bool:
    if name in _PATHS and given is not None and recorded is not None:
        return Path(str(given)).expanduser().resolve() == Path(str(recorded)).expanduser().resolve()
    if isinstance(given, str) and is_redacted(given):
        return redact(given) == recorded  # run.json keeps the value with its secrets masked
    return given == recorded


def _show(value: Any) -> str:
    if value is None or value == [] or value == ():
        return "(not set)"
    if isinstance(value, (list, tuple)):
        return " ".join(map(str, value))
    if isinstance(value, Path):
        return str(value)
    return json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value


def _param(ctx: click.Context, name: str) -> click.Parameter:
    return next(p for p in ctx.command.params if p.name == name)


def _spelling(param: click.Parameter) -> str:
    """The flag as the user types it (`--devices` for the parameter device_spec)."""
    return next((o for o in param.opts if o.startswith("--")), param.opts[0])


def _typed(ctx: click.Context, name: str) -> bool:
    return ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE


def resumed_params(
    ctx: click.Context, run: Mapping[str, Any], where: Path, request: type[RecordedRequest] = RunRequest
) -> Resumed:
    """The command's parameters for a resume: recorded values, with typed flags checked against them.
    `request`: the command's request (its recorded fields and the kind of folder it resumes)."""
    here = where / "run.json"
    _same_kind(run, request.KIND, where)
    fields = request.recorded()
    known = {f.metadata["key"] for f in fields}
    flags = run.get("flags") if isinstance(run.get("flags"), Mapping) else {}
    unknown = [k for k in flags if k not in known]
    if unknown:
        raise ConfigError(
            f"this run recorded flags that this edgefarm cannot carry into a resume: {', '.join(unknown)}",
            where=f"{here} field 'flags'",
            fix="resume with the edgefarm that started the run (run.json `versions`), or start a new run",
        )
    out = Path(ctx.params["out"]).expanduser().resolve()
    if _typed(ctx, "out") and out != where.expanduser().resolve().parent:  # never accepted and ignored
        raise ConfigError(f"--out {ctx.params['out']} is not where this run is: a resume continues in its "
                          f"own folder {where}", where="--out",
                          fix="leave --out out, or start a new run without --resume")  # fmt: skip
    params, carried, defaulted = dict(ctx.params), [], []
    for f in fields:
        key, param = f.metadata["key"], _param(ctx, f.name)
        flag = _spelling(param)
        found, raw = _recorded_value(run, key)
        if not found:  # recorded by an older edgefarm: the flag's own default (or what was typed)
            defaulted.append(flag)
            continue
        if isinstance(raw, str) and MASK in raw and not _typed(ctx, f.name):
            raise ConfigError(
                f"the recorded {flag} held a secret, which run.json does not keep: {raw}",
                where=f"{here} field '{key}'",
                fix=f"pass {flag} again with its full value (the same as the first run's)",
            )
        recorded = _checked(ctx, param, flag, key, raw, here) if raw is not None else f.default
        if _typed(ctx, f.name):
            given = params[f.name]
            if not _same(f.name, given, raw if isinstance(raw, str) and MASK in raw else recorded):
                raise ConfigError(
                    f"{flag} {_show(given)} differs from this run's recorded {flag} {_show(recorded)}",
                    where=f"{here} field '{key}'",
                    fix=f"leave {flag} out (the run continues with what it recorded), "
                    "or start a new run without --resume",
                )
            recorded = given
        params[f.name] = recorded
        if recorded != f.default and f.name not in _NAMED:
            if isinstance(recorded, bool):  # `--no-settle` when a flag on by default was off
                carried.append(flag if recorded or not param.secondary_opts else param.secondary_opts[0])
            else:
                carried.append(f"{flag} {_show(recorded)}")
    return Resumed(params, tuple(carried), tuple(defaulted))


def _checked(ctx: click.Context, param: click.Parameter, flag: str, key: str, raw: Any, here: Path) -> Any:
    """A recorded value through the flag's own click type (run.json is input like any other)."""
    try:
        value = param.type_cast_value(ctx, raw)
    except (click.BadParameter, TypeError, ValueError) as e:
        raise ConfigError(
            f"recorded {flag} {_show(raw)[:80]} is not a valid value: {getattr(e, 'message', e)}",
            where=f"{here} field '{key}'",
            fix="resume only folders edgefarm wrote, untouched, or start a new run",
        ) from None
    return tuple(value) if isinstance(value, list) else value


def describe(resumed: Resumed, run_id: str) -> str:
    """The line a resume prints first: what it carries from run.json."""
    flags = " ".join(resumed.carried) or "none beyond the defaults"
    text = f"resuming run {run_id} with its recorded flags: {flags}"
    if resumed.defaulted:
        text += f" (not in its run.json, so at their defaults: {' '.join(resumed.defaulted)})"
    return text


__all__ = ["COMMANDS", "Resumed", "describe", "resumed_params"]
