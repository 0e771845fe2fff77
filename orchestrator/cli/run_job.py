"""The run proper of `edgefarm run` (`run.py` is its command line): the dataset, the devices, the farm,
the stand-ins, the reports and the exit status."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape

from ..datasets import load_dataset, require_valid
from ..errors import ConfigError, DeviceError, ModelError, OutputError
from ..fallback import absent_named, run_stand_ins, stand_in_boards
from ..farm import run_farm
from ..fsutil import make_new_dir
from ..interrupt import INTERRUPTED_EXIT, stop_on_interrupt
from ..inventory import Inventory, select_usable
from ..jobs import JobOptions
from ..models import ModelSummary
from ..plan import dataset_fingerprint, refused_samples, run_record, select_samples
from ..progress import stderr_console
from ..rundir import host_info, load_report, new_run_id, utc_now, versions, write_reports, write_run_json
from ..runners.base import RunOptions, device_settings
from ..runners.stamp import device_versions
from ..shard import merge_shards, plan_shards


def run_job(
    *,
    device_spec: str,
    inventory: Path | None,
    inv: Inventory,
    model_summary: ModelSummary,
    dataset_spec: str,
    fmt: str | None,
    subset: str | None,
    limit: int | None,
    per_modality: int | None,
    modalities: tuple[str, ...],
    out: Path,
    resume: Path | None,
    previous: dict | None,
    max_output_tokens: int | None,
    backend: str | None,
    threads: int | None,
    sample_timeout_s: float,
    cooldown_c: float | None,
    cooldown_max_s: float,
    judge_url: str | None,
    judge_model: str | None,
    fallback_boards: tuple[str, ...],
    fallback_wait_s: float,
    shard: bool,
    repeat: int,
    warmup: int,
) -> None:
    """The run, once `edgefarm run` has the model, devices.yaml and this host's runners started:
    the dataset and the sample selection, the devices, run.json, the farm, the stand-ins, the
    reports and the exit status."""
    err = stderr_console()
    asked = {
        "devices": device_spec,
        "inventory": inventory,
        "limit": limit,
        "per_modality": per_modality,
        "modality": list(modalities),
        "max_output_tokens": max_output_tokens,
        "backend": backend,
        "threads": threads,
        "sample_timeout_s": sample_timeout_s,
        "cooldown_c": cooldown_c,
        "cooldown_max_s": cooldown_max_s,
        "format": fmt,
        "subset": subset,
        "judge_model": judge_model,
        "judge_url": judge_url,
        "shard": shard or None,
        "repeat": repeat if repeat > 1 else None,
        "warmup": warmup or None,
    }
    flags = {k: (str(v) if isinstance(v, Path) else v) for k, v in asked.items()}
    dataset = require_valid(load_dataset(dataset_spec, format=fmt, subset=subset))
    samples = select_samples(dataset, modalities, limit, per_modality)
    refused = refused_samples(samples, model_summary.max_context_tokens)  # too big to send: error rows
    dataset_sha = dataset_fingerprint(dataset, samples)
    score = scorer_for(
        dataset.format, judge_url, judge_model
    )  # bad judge flags fail before any folder exists

    stand_in_table = stand_in_boards(inv, fallback_boards)  # a bad --fallback fails before any folder exists
    named, absent = absent_named(inv, device_spec, stand_in_table)  # named phones a board stands in for
    selection = select_usable(inv, named)  # as `edgefarm devices` lists
    selection = dataclasses.replace(selection, unusable=selection.unusable + absent)
    for note in selection.notes:
        err.print(f"[yellow]note:[/] {note}")
    for u in selection.unusable:
        err.print(f"[yellow]not used:[/] {u.name} ({u.state}): {u.problem}")
    for sample_id, why in refused.items():
        err.print(f"[yellow]not sent:[/] {escape(sample_id)}: {escape(why)}", highlight=False)

    settings = device_settings(backend, threads)
    devices = [d.name for d in selection.devices]
    shards = None
    if shard:  # identical devices share the samples; the report gets one row per group
        grouping = {d.name: settings(d) for d in selection.devices}
        shards = plan_shards(selection.devices, grouping, samples, selection.infos)
        devices = shards.report_devices(devices)
    if previous is not None:
        _check_resumable(previous, model_summary.sha256, dataset_sha, [s.id for s in samples], resume)
        run_id, run_dir, started = previous["run_id"], Path(resume), str(previous.get("started_at", ""))
        # a device of the first run that is not here now keeps its folder and its row in the report
        devices += [d for d in previous.get("devices") or [] if isinstance(d, str) and d not in devices]
    else:
        run_id, run_dir, started = new_run_dir(out)
    record = run_record(
        run_id=run_id,
        started_at=started,
        model=model_summary,
        dataset=dataset,
        dataset_spec=dataset_spec,
        samples=samples,
        dataset_sha=dataset_sha,
        devices=devices,
        flags=flags,
        versions={},  # written with the run's end (package_versions)
        host=host_info(),
        unusable=[dataclasses.asdict(u) for u in selection.unusable],
        notes=list(selection.notes),
    )
    if shards is not None:
        record["shards"] = shards.record()
    write_run_json(run_dir, record)
    err.print(f"run {run_id}: {len(samples)} samples x {len(selection.devices)} device(s) -> {run_dir}")

    opts = RunOptions(
        run_id=run_id, sample_timeout_s=sample_timeout_s, cooldown_c=cooldown_c, cooldown_max_s=cooldown_max_s,
        repeat=repeat, warmup=warmup,
    )  # fmt: skip
    per_device = {d.name: opts.for_device(d, backend, threads) for d in selection.devices}
    job_opts = JobOptions(
        max_output_tokens=max_output_tokens or 128, override=max_output_tokens is not None, refused=refused
    )
    with stop_on_interrupt(lambda message: err.print(f"[yellow]{message}[/]")) as stop:
        outcomes = run_farm(
            selection.devices,
            dataset,
            samples,
            model_summary,
            per_device,
            job_opts,
            run_dir,
            err,
            score,
            stop,
            assignment=shards.assignment if shards else None,
        )
        # the rows a device without trouble wrote to its results.jsonl, for the report; a failed device
        # is read back from its folder (a stand-in or its own return after a loss may add rows there)
        written = {o.name: o.results for o in outcomes if not o.error}
        if shards is not None:
            merge_shards(shards, outcomes, dataset, samples, run_dir, score)
        stood_in = run_stand_ins(
            inv=inv, table=stand_in_table, selected=selection.devices, outcomes=outcomes,
            unusable=selection.unusable if device_spec == "all" else absent, dataset=dataset, samples=samples, model=model_summary, opts=opts,
            backend=backend, threads=threads, job_opts=job_opts, run_dir=run_dir, run_record=record,
            wait_s=fallback_wait_s, score=score, console=err, stop=stop,
        ) if not stop.is_set() else []  # fmt: skip

        # still under the handlers: a Ctrl-C while the reports are written stops nothing half-way (the
        # first is noted, a second exits at once), never click's "Aborted!" with exit 1
        record["finished_at"] = utc_now().isoformat(timespec="seconds")
        record["versions"] = versions()
        record["device_versions"] = device_versions({o.name: o.runner for o in outcomes})  # runners/stamp.py
        write_run_json(run_dir, record)
        report = load_report(run_dir, written)
        paths = write_reports(run_dir, report)
        _print_outcomes(outcomes, report, model_summary.path.name, err)
        click.echo(str(paths["html"]))
    if stop.is_set():
        done = sum(len(o.results) for o in outcomes)
        err.print(
            f"interrupted: {done} of {len(samples) * len(outcomes)} sample runs finished and are kept; "
            f"continue with: edgefarm run --resume {run_dir}",
            highlight=False,
        )
        sys.exit(INTERRUPTED_EXIT)
    covered = {s.phone for s in stood_in if s.completed}  # a stand-in finished what the phone could not
    failed = [o for o in outcomes if o.error and o.name not in covered]
    if failed:
        model_everywhere = len(failed) == len(outcomes) and all(
            o.error_code == ModelError.exit_code for o in failed
        )
        output = any(o.error_code == OutputError.exit_code for o in failed)  # fix the disk, then --resume
        sys.exit(
            OutputError.exit_code
            if output
            else ModelError.exit_code
            if model_everywhere
            else DeviceError.exit_code
        )


def _print_outcomes(outcomes, report, model_name: str, err: Console) -> None:
    """The comparison tables on stdout (and evalscope's table per device); warnings and failures on stderr."""
    from ..report.terminal import device_tables, stdout_console  # the report's stage, not start-up
    from ..scoring.evalscope_table import render_table

    stdout_console().print(device_tables(report))
    for o in outcomes:
        if o.report and o.report.get("metrics"):  # evalscope formats: evalscope's own table per device
            click.echo(f"\n{o.name}:\n" + render_table(model_name, o.report))
    for o in outcomes:
        for note in o.notes:
            if note.startswith("warning:"):
                err.print(f"[yellow]{o.name}:[/] {note}")
        if o.error:
            err.print(f"[red]{o.name} failed:[/] {o.error}")


def scorer_for(fmt: str, judge_url: str | None, judge_model: str | None):
    """The dataset format's scorer, followed by the LLM judge when one is asked for."""
    from ..scoring import SCORERS  # the registry: each scorer imports nltk & co. when it first scores

    base = SCORERS.get(fmt).score
    if not judge_url and not judge_model:
        return base
    from ..scoring.judge import JudgeConfig, add_judge_accuracy, endpoint

    if not (judge_url and judge_model):
        raise ConfigError(
            "--judge and --judge-model go together",
            where="--judge",
            fix="pass both the endpoint URL and the judge's model name",
        )
    if fmt != "general_vqa":
        raise ConfigError(
            f"the LLM judge scores General-VQA datasets, not {fmt}",
            where="--judge",
            fix="drop --judge, or use a General-VQA dataset",
        )
    cfg = JudgeConfig(url=judge_url, model=judge_model, api_key=os.environ.get("EDGEFARM_JUDGE_API_KEY"))
    endpoint(cfg)  # a URL with both a password and EDGEFARM_JUDGE_API_KEY fails before any folder exists

    def score(dataset, outputs):
        return add_judge_accuracy(base(dataset, outputs), dataset, cfg)

    return score


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


def _check_resumable(
    previous: dict, model_sha: str, dataset_sha: str, sample_ids: list[str], where: Path
) -> None:
    model = previous.get("model") if isinstance(previous.get("model"), dict) else {}
    if model.get("sha256") != model_sha:
        raise ConfigError(
            "the model file differs from the one this run started with (its sha256 changed)",
            where=str(where / "run.json"),
            fix="restore that model file, or start a new run without --resume",
        )
    ds = previous.get("dataset") if isinstance(previous.get("dataset"), dict) else {}
    if ds.get("sha256") != dataset_sha or ds.get("sample_ids") != sample_ids:
        raise ConfigError(
            "the dataset or the sample selection differs from the one this run started with "
            "(its files changed since)",
            where=str(where / "run.json"),
            fix="restore the dataset's files, or start a new run without --resume; the selection flags "
            "(--limit, --per-modality, --modality, --subset, --format) are taken from run.json",
        )
