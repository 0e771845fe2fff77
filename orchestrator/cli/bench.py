"""`edgefarm bench`: fixed shapes on every device (llama-bench's grammar and fields). The flags become a
BenchRequest; then the bench's three stages, as the run's (orchestrator/bench/plan.py, execute.py,
finish.py). The chosen output goes to stdout (and bench-rows.<fmt> in the run folder); progress and
notes to stderr."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from click.core import ParameterSource

from android_runner.status import DEFAULT_SAMPLE_TIMEOUT_S

from ..bench.execute import execute_bench
from ..bench.finish import finish_bench, rows_path
from ..bench.grid import MAX_REPETITIONS
from ..bench.html_page import partial_note
from ..bench.plan import BenchRequest, plan_bench, read_bench_inputs
from ..bench.sustained import summary
from ..bundled import BUNDLED_MODEL
from ..errors import ConfigError
from ..farm.run_json import RunJson
from ..farm.rundir import read_run_json
from ..history.record import remember
from ..interrupt import stop_on_interrupt
from ..printers import BENCH_ROWS, formats, printer
from ..progress import stderr_console
from ..report.terminal import conditions_parts
from ..run.bounds import MAX_SUSTAIN_PASSES
from ..run.types import PreviousRun
from .options import cluster_option, inventory_option, settle_options
from .resume import describe, resumed_params


@click.command("bench")
@click.option(
    "--devices", "device_spec", default="all", show_default=True, help="all | local | NAME[,NAME...]"
)
@inventory_option
@click.option("--model", type=click.Path(path_type=Path), default=BUNDLED_MODEL, show_default="bundled tiny model",
              help=".litertlm model file")  # fmt: skip
@click.option("-p", "--n-prompt", "prompts", default="512", show_default=True,
              help="prompt tokens per cell: N, N,M, A-B, A-B+STEP, A-B*FACTOR")  # fmt: skip
@click.option(
    "-n",
    "--n-gen",
    "gens",
    default="128",
    show_default=True,
    help="generated tokens per cell (0: prefill only)",
)
@click.option(
    "-d",
    "--n-depth",
    "depths",
    default="0",
    show_default=True,
    help="context tokens filled before the prompt",
)
@click.option("-r", "--repetitions", type=click.IntRange(1, MAX_REPETITIONS), default=5, show_default=True,
              help="repetitions per cell (every one kept)")  # fmt: skip
@click.option("--backend", "backends", default=None, help="cpu,gpu,npu (default: each device's backend)")
@click.option(
    "--threads", default=None, help="CPU threads, a list too (default: each device's, else the runtime's)"
)
@click.option("--max-num-tokens", type=click.IntRange(1, 1 << 20), default=None,
              help="the engine's token limit (its KV cache; default: the model's context)")  # fmt: skip
@click.option("--warmup/--no-warmup", default=True, show_default=True,
              help="run each cell once first and count nothing from it (as llama-bench; docs/bench.md)")  # fmt: skip
@click.option("-o", "--output", type=click.Choice(formats(BENCH_ROWS)), default="md", show_default=True,
              help="what stdout and bench-rows.<fmt> get (bench.json always holds everything)")  # fmt: skip
@click.option("--out", type=click.Path(path_type=Path), default=Path("runs"), show_default=True,
              help="folder that receives runs/<run-id>")  # fmt: skip
@click.option("--resume", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="continue the bench in this folder (its flags are taken from run.json)")  # fmt: skip
@click.option("--sample-timeout", "sample_timeout_s", type=click.FloatRange(1, 86400), default=DEFAULT_SAMPLE_TIMEOUT_S,
              show_default=True, help="seconds one repetition of a cell may take")  # fmt: skip
@click.option("--parallel-local", is_flag=True, help="run this host's devices together (they share its CPU)")
@cluster_option("bench a Ray cluster's farm hosts' devices (HEAD:6379; docs/cluster.md)")
@click.option("--sustain", type=click.IntRange(1, MAX_SUSTAIN_PASSES), default=1, show_default=True,
              help="run the grid N times back to back, no cooldown: each pass's speed as % of the first, "
              "heat and the first throttle (each cell once per pass: not with -r)")  # fmt: skip
@settle_options(default=True)
@click.option("--db", default=None, metavar="PATH|URL",
              help="record the bench in this results database (SQLite file or postgresql://...; default: "
              "$EDGEFARM_DB, else a file in the user's data folder); `none`: do not record")  # fmt: skip
@click.pass_context
def bench(ctx: click.Context, db: str | None, **params) -> None:
    """Prefill and decode speed at fixed shapes (-p prompt, -n generated, -d depth) on every device."""
    console = stderr_console()
    previous = None
    if params["resume"] is not None:  # the run's resume: the recorded flags, typed ones must agree
        where = Path(params["resume"])
        run = read_run_json(where, own_folder=True)
        resumed = resumed_params(ctx, run, where, BenchRequest)
        params = {k: v for k, v in resumed.params.items() if k != "db"}  # not a BenchRequest field
        console.print(describe(resumed, str(run.get("run_id", ""))), highlight=False)
        previous = PreviousRun.of(RunJson.from_dict(run), where)
    elif params["sustain"] > 1 and ctx.get_parameter_source("repetitions") != ParameterSource.COMMANDLINE:
        params["repetitions"] = 1  # a cell's repetitions are its passes (plan_bench refuses a typed -r)
    request = BenchRequest(**{k: v for k, v in params.items() if k != "resume"})
    inputs = read_bench_inputs(request)
    model = inputs.model
    if previous is not None and previous.model_sha256 != model.sha256:
        raise ConfigError("the model file differs from the one this bench started with (its sha256 changed)",
                          where=str(previous.run_dir / "run.json"), fix="pass the same --model, or start a new bench")  # fmt: skip
    the_plan = plan_bench(request, model, inputs.selection, previous, inputs.bandwidth_gbs, inputs.cluster)
    with stop_on_interrupt(lambda message: console.print(f"[yellow]{message}[/]")) as stop:
        ex = execute_bench(the_plan, console, stop)
        record = finish_bench(the_plan, ex, stop)
    click.echo(printer(BENCH_ROWS, request.output).text()(record.rows), nl=False)
    for name, curve in record.sustain.items():  # --sustain: a line per device (report.html has every pass)
        if curve:
            console.print(summary(name, curve), highlight=False, markup=False)
    for o in record.outcomes:
        if o.error:
            console.print(f"[red]{o.name} failed:[/] {o.error}")
    for part in conditions_parts(record.run.conditions):  # as under a run's tables (docs/conditions.md)
        console.print(part, highlight=False)
    console.print(f"bench written: {rows_path(record, request.output)}")
    gaps = partial_note([c.to_json() for c in record.cells])
    if record.interrupted or gaps:  # what an interruption or a failed device left, and what completes it
        said = ("interrupted: " if record.interrupted else "") + (gaps or "every cell measured")
        console.print(f"{said}; continue with: edgefarm bench --resume {record.run_dir}", highlight=False)
    if not record.interrupted:
        remember(db, console, bench=record)  # the record in memory: no folder read back
    if record.exit_code:
        sys.exit(record.exit_code)
