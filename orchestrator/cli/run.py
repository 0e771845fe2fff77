"""`edgefarm run`: stage, run, collect, score, report — on every selected device in parallel.

This module is the command line; the run itself is `run_job.py`.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from ..bundled import BUNDLED_DATASET, BUNDLED_MODEL
from ..inventory import load_inventory
from ..models import inspect_model
from .run_job import run_job


def inventory_option(f):
    return click.option(
        "--inventory",
        "inventory",
        type=click.Path(path_type=Path),
        default=lambda: os.environ.get("EDGEFARM_INVENTORY"),
        help="devices.yaml (default: $EDGEFARM_INVENTORY; none: attached phones + this host)",
    )(f)


@click.command("run")
@click.option(
    "--devices",
    "device_spec",
    default="all",
    show_default=True,
    help="all | local | NAME[,NAME...] (see `edgefarm devices`)",
)
@inventory_option
@click.option(
    "--model",
    type=click.Path(path_type=Path),
    default=BUNDLED_MODEL,
    show_default="bundled tiny model",
    help=".litertlm model file",
)
@click.option(
    "--dataset",
    "dataset_spec",
    default=str(BUNDLED_DATASET),
    show_default="bundled EdgeMMEval set",
    help="dataset folder, metadata.jsonl / JSONL / TSV file, or a hub id",
)
@click.option("--format", "fmt", default=None, help="dataset format (default: detected)")
@click.option("--subset", default=None, help="subset/split to load (format-specific)")
@click.option(
    "--limit", type=click.IntRange(min=1), default=None, help="run only the first N selected samples"
)
@click.option(
    "--per-modality", type=click.IntRange(min=1), default=None, help="at most N samples per modality"
)
@click.option("--modality", "modalities", multiple=True, help="only these modalities (repeatable)")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path("runs"),
    show_default=True,
    help="folder that receives runs/<run-id>",
)
@click.option(
    "--resume",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="continue the run in this folder: each device picks up where it stopped",
)
@click.option(
    "--max-output-tokens",
    type=click.IntRange(min=1),
    default=None,
    help="cap on generated tokens per turn (default: the row's own, else 128)",
)
@click.option(
    "--backend",
    type=click.Choice(["cpu", "gpu", "npu"]),
    default=None,
    help="override every device's backend (default: each device's, else cpu)",
)
@click.option("--threads", type=click.IntRange(min=1), default=None, help="CPU threads for the runtime")
@click.option(
    "--judge",
    "judge_url",
    default=None,
    help="OpenAI-compatible endpoint (…/v1) of an LLM judge for General-VQA accuracy",
)
@click.option("--judge-model", default=None, help="the judge's model name (with --judge)")
@click.option(
    "--cooldown-c",
    type=float,
    default=None,
    help="before each sample, wait until the device is at or below this temperature (°C): "
    "hottest thermal zone on boards/host, battery temperature on phones",
)
@click.option(
    "--cooldown-max-s",
    type=click.FloatRange(min=0),
    default=120.0,
    show_default=True,
    help="longest wait for --cooldown-c before a sample runs anyway (the row records the wait)",
)
@click.option(
    "--sample-timeout",
    "sample_timeout_s",
    type=click.FloatRange(min=1),
    default=300.0,
    show_default=True,
    help="seconds one sample may take before it is recorded as timeout",
)
@click.option(
    "--fallback",
    "fallback_boards",
    multiple=True,
    metavar="BOARD",
    help="a board that stands in for any phone of the run that is absent or lost: it runs the phone's "
    "remaining samples, marked (repeatable; devices.yaml `fallback_for:` names phones per board)",
)
@click.option(
    "--fallback-wait-s",
    type=click.FloatRange(min=0),
    default=60.0,
    show_default=True,
    help="how long a lost phone may take to come back before its stand-in board takes over",
)
@click.option(
    "--shard",
    is_flag=True,
    help="identical devices (same phone model, SoC, backend, runner) split the samples between them; "
    "the report shows them as one row listing their serials",
)
@click.option(
    "--repeat",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="run every sample N times: latency figures over all runs, the first run's answer is scored",
)
@click.option(
    "--warmup",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="run this many samples first and count nothing from them",
)
def run(
    device_spec,
    inventory,
    model,
    dataset_spec,
    fmt,
    subset,
    limit,
    per_modality,
    modalities,
    out,
    resume,
    max_output_tokens,
    backend,
    threads,
    sample_timeout_s,
    cooldown_c,
    cooldown_max_s,
    judge_url,
    judge_model,
    fallback_boards=(),
    fallback_wait_s=60.0,
    shard=False,
    repeat=1,
    warmup=0,
) -> None:
    """Run the model over the dataset on every selected device; write and print the combined report."""
    previous = None
    if resume is not None:  # the selection comes from run.json; flags typed again must agree with it
        from ..rundir import read_run_json
        from .resume import RECORDED, resumed_params

        previous = read_run_json(resume, own_folder=True)
        p = resumed_params(click.get_current_context(), previous, Path(resume))
        (device_spec, inventory, model, dataset_spec, fmt, subset, limit, per_modality, modalities,
         max_output_tokens, backend, threads, sample_timeout_s, cooldown_c, cooldown_max_s, judge_url,
         judge_model) = (p[r.param] for r in RECORDED)  # fmt: skip
    model_summary = inspect_model(model)
    inv = load_inventory(inventory)
    run_job(
        device_spec=device_spec, inventory=inventory, inv=inv, model_summary=model_summary,
        dataset_spec=dataset_spec, fmt=fmt, subset=subset, limit=limit, per_modality=per_modality,
        modalities=modalities, out=out, resume=resume, previous=previous,
        max_output_tokens=max_output_tokens, backend=backend, threads=threads,
        sample_timeout_s=sample_timeout_s, cooldown_c=cooldown_c, cooldown_max_s=cooldown_max_s,
        judge_url=judge_url, judge_model=judge_model, fallback_boards=fallback_boards,
        fallback_wait_s=fallback_wait_s, shard=shard, repeat=repeat, warmup=warmup,
    )  # fmt: skip


COMMANDS = [run]
