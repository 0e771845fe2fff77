"""`edgefarm run`: the flags, parsed into a RunRequest; then the run's three stages (orchestrator/run/):
plan, execute, finish. The last line on stdout names report.html."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from android_runner.backend import BACKENDS
from android_runner.status import DEFAULT_MAX_OUTPUT_TOKENS, DEFAULT_SAMPLE_TIMEOUT_S

from ..bundled import BUNDLED_DATASET
from ..farm.rundir import read_run_json
from ..history.record import remember
from ..interrupt import INTERRUPTED_EXIT, interrupts_raise, stop_on_interrupt
from ..progress import stderr_console
from ..run.bounds import check_flags
from ..run.execute import execute
from ..run.finish import finish, interrupted_note
from ..run.plan import plan, read_inputs
from ..run.types import DEFAULT_FALLBACK_WAIT_S, RunRequest
from ..runners.base import DEFAULT_COOLDOWN_MAX_S
from .options import (
    BackendList,
    cluster_option,
    devices_option,
    inventory_option,
    model_option,
    settle_options,
)
from .resume import describe, resumed_params


@click.command("run")
@devices_option()
@inventory_option
@model_option()
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
    help=f"cap on generated tokens per turn (default: the row's own, else {DEFAULT_MAX_OUTPUT_TOKENS})",
)
@click.option(
    "--max-num-tokens",
    type=click.IntRange(min=1),
    default=None,
    help="the runtime's token limit per conversation (its KV cache; default: the model's own)",
)
@click.option(
    "--backend",
    type=BackendList(),
    default=None,
    help=f"override every device's backend (default: each device's, else cpu); several, comma-separated "
    f"({','.join(BACKENDS)}): each device runs each in turn, the report's backend matrix (docs/matrix.md)",
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
    default=DEFAULT_COOLDOWN_MAX_S,
    show_default=True,
    help="longest wait for --cooldown-c before a sample runs anyway (the row records the wait)",
)
@settle_options(default=False)
@click.option(
    "--sample-timeout",
    "sample_timeout_s",
    type=click.FloatRange(min=1),
    default=DEFAULT_SAMPLE_TIMEOUT_S,
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
    default=DEFAULT_FALLBACK_WAIT_S,
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
    "--units",
    is_flag=True,
    help="identical devices (the groups --shard forms) each run every sample; the report gives each figure's "
    "spread between the units beside the spread within one, and names a unit that stands out",
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
@click.option(
    "--sustain",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="run the samples N times back to back without cooldown: speed, temperature and clocks per pass, "
    "the time to the first throttle and the steady-state speed (not with --repeat or --cooldown-c)",
)
@click.option(
    "--parallel-local",
    is_flag=True,
    help="run several devices of this host (kind: local) at the same time; by default they run one "
    "after another, since they share this host's CPU and would slow each other down",
)
@click.option(
    "--db",
    default=None,
    metavar="PATH|URL",
    help="record the run in this results database (SQLite file or postgresql://...; default: $EDGEFARM_DB, "
    "else a file in the user's data folder); `none`: do not record",
)
@click.option(
    "--fidelity",
    is_flag=True,
    help="after each answer, the device also scores the reference answer (per-token log-likelihoods) and "
    "tokenizes its answer: each device's arithmetic against the reference device (docs/fidelity.md)",
)
@click.option(
    "--reference",
    default=None,
    metavar="DEVICE",
    help="with --fidelity: the device the others are measured against (default: the first CPU device)",
)
@click.pass_context
@cluster_option("run on a Ray cluster's farm hosts (HEAD:6379; docs/cluster.md)")
def run(ctx: click.Context, **params) -> None:
    """Run the model over the dataset on every selected device; write and print the combined report."""
    db = params.pop("db")
    previous = None
    console = stderr_console()
    try:  # reading the inputs, listing the devices, joining a cluster: a Ctrl-C or SIGTERM ends it here
        with interrupts_raise():
            if params["resume"] is not None:  # the flags come from run.json; typed flags must agree
                previous = read_run_json(params["resume"], own_folder=True)
                resumed = resumed_params(ctx, previous, Path(params["resume"]))
                params = {k: v for k, v in resumed.params.items() if k != "db"}  # not a RunRequest field
                console.print(describe(resumed, str(previous.get("run_id", ""))), highlight=False)
            request = RunRequest(**{k: tuple(v) if isinstance(v, list) else v for k, v in params.items()})
            check_flags(request)  # every count, size and time within its bound (run/bounds.py)
            the_plan = plan(request, read_inputs(request, previous))
    except KeyboardInterrupt:
        console.print("[yellow]interrupted before any device was used: nothing was written[/]")
        sys.exit(INTERRUPTED_EXIT)
    # the handlers stay until the reports are on disk: a Ctrl-C while they are written stops nothing
    # half-way (the first is noted, a second exits at once), never click's "Aborted!" with exit 1
    with stop_on_interrupt(lambda message: console.print(f"[yellow]{message}[/]")) as stop:
        record = finish(the_plan, execute(the_plan, console, stop), console, stop)
        if not record.interrupted:
            remember(db, console, run=record)  # the record in memory: no folder read back
        click.echo(str(record.paths["html"]))  # the last line: the report's path (README)
    if record.interrupted:
        console.print(interrupted_note(the_plan, record), highlight=False)
    if record.exit_code:
        sys.exit(record.exit_code)
