"""`edgefarm ab`: two configurations on the same devices in alternating blocks (ABBA), compared round
by round so the machine's drift between blocks cancels (report/ab.py)."""

from __future__ import annotations

import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import click

from ..errors import ConfigError
from ..interrupt import INTERRUPTED_EXIT
from ..printers import COMPARISON, formats
from ..report.ab import (
    FAMILY_LEVEL,
    MAX_ROUNDS,
    MIN_ROUNDS,
    RESOLVE_FROM_ROUNDS,
    Block,
    ab_comparison,
    order,
    rounds_text,
    should_stop,
    widest_resolution,
)
from ..report.build import load_report, measured_runs
from ..report.compare_out import FAIL_ON
from ..run.ab_length import DEFAULT_BLOCK_S, MAX_BLOCK_S, block_length
from .report import REGRESSION_EXIT, print_comparison

# run flags a configuration may not set: ab owns where the blocks go and that each is a fresh run
_OWNED = ("--out", "--resume")


def _flags(text: str, where: str) -> list[str]:
    try:
        flags = shlex.split(text)
    except ValueError as e:
        raise ConfigError(
            f"cannot read the flags {text!r}: {e}", where=where, fix="quote them as for a shell"
        ) from e
    for f in flags:
        if f.split("=", 1)[0] in _OWNED:
            raise ConfigError(
                f"{f} is set by edgefarm ab", where=where, fix="give the output folder with ab's --out"
            )
    return flags


class _BlockRun:
    """One block's `edgefarm run`, in its own session so that a terminal's Ctrl-C reaches ab alone:
    ab passes each signal on as one SIGINT, which the run treats as its own Ctrl-C (the first stops
    it cleanly keeping what finished, a second ends it at once: interrupt.py)."""

    def __init__(self) -> None:
        self.interrupted = threading.Event()
        self.proc: subprocess.Popen | None = None

    def handler(self, signum, frame) -> None:
        self.interrupted.set()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)

    def run(self, argv: list[str]) -> tuple[int, str]:
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     start_new_session=True)  # fmt: skip
        _, err = self.proc.communicate()
        return self.proc.returncode, err


@click.command("ab", context_settings={"ignore_unknown_options": True})
@click.option("--a", "config_a", default="", help='configuration A: `edgefarm run` flags, e.g. "--threads 2"')
@click.option(
    "--b", "config_b", default="", help='configuration B: e.g. "--threads 4" or "--inventory other.yaml"'
)
@click.option("--rounds", type=click.IntRange(MIN_ROUNDS, MAX_ROUNDS), default=6, show_default=True,
              help="rounds, each a block of A and one of B back to back (ABBA order); with --resolve, the most "
                   "rounds; a block runs every selected sample (run's --limit / --per-modality) for --block-s")  # fmt: skip
@click.option("--resolve", "resolve_pct", type=click.FloatRange(0.5, 50), default=None,
              help="PCT: stop adding rounds once the time per sample is resolved to ±PCT% on every device "
                   "(half its interval), checked after rounds 4, 6, 8, ... up to --rounds")  # fmt: skip
@click.option("--block-s", type=click.FloatRange(0, MAX_BLOCK_S), default=None,
              help=f"seconds each block measures at least, per device (default {DEFAULT_BLOCK_S:g}): ab runs "
                   "each sample as many times in a block (run's --repeat), chosen from the warm-up blocks; "
                   "0: one pass per block. Not with --repeat or --sustain among the run flags")  # fmt: skip
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), required=True,
              help="folder for the blocks' run folders (a/ and b/; warmup/: one uncounted block of each first)")  # fmt: skip
@click.option(
    "--format", "fmt", type=click.Choice(formats(COMPARISON)), default="term", show_default=True
)
@click.option("--fail-on", type=click.Choice(FAIL_ON), default="none", show_default=True,
              help=f"exit {REGRESSION_EXIT} when B is significantly worse than A (regression) or different (any)")  # fmt: skip
@click.argument("run_flags", nargs=-1, type=click.UNPROCESSED)
def ab(
    config_a: str,
    config_b: str,
    rounds: int,
    resolve_pct: float | None,
    block_s: float | None,
    out: Path,
    fmt: str,
    fail_on: str,
    run_flags: tuple[str, ...],
) -> None:
    """Measure configuration B against A on the same devices in alternating blocks, so the machine's
    drift (load, heat, other jobs) cancels: `edgefarm ab --a "..." --b "..." --out DIR -- RUN FLAGS`
    (the devices, dataset and selection both share). Each block is a real `edgefarm run` of every
    selected sample after one uncounted one (--warmup 1 unless the flags set --warmup), as many times
    as make it measure --block-s; each sample's ratio B/A is taken between the neighbouring blocks of a
    round, and the interval is over the rounds; the output says the smallest difference it resolves.
    The blocks are not recorded in the results database unless the flags give --db. Ctrl-C: the block under way stops as a run does, ab exits 130 comparing nothing."""

    common = _flags(shlex.join(run_flags), "edgefarm ab RUN FLAGS")
    configs = {"a": _flags(config_a, "--a"), "b": _flags(config_b, "--b")}
    given = {f.split("=", 1)[0] for f in [*common, *configs["a"], *configs["b"]]}
    if "--db" not in given:
        common += ["--db", "none"]  # 2 x rounds + 2 runs of one measurement are not runs of their own
    passes_given = sorted(given & {"--repeat", "--sustain"})
    if passes_given and block_s is not None:
        raise ConfigError(f"--block-s and {passes_given[0]} both set how often a block runs each sample",
                          where="edgefarm ab --block-s", fix=f"drop --block-s, or {passes_given[0]} from the run flags")  # fmt: skip
    if block_s is None:
        block_s = 0.0 if passes_given else DEFAULT_BLOCK_S
    if not given & {"--settle", "--no-settle"}:
        common += ["--settle"]  # each block starts on settled devices (docs/conditions.md); --no-settle opts out
    if "--warmup" not in given:
        # each block is a fresh process whose first sample pays its cold start (lab: 37-579 ms where
        # the others took 10-50 ms), a swing of a whole round's ratio on 8 samples
        common += ["--warmup", "1"]
    resolve = None if resolve_pct is None else resolve_pct / 100
    if resolve is not None and rounds < RESOLVE_FROM_ROUNDS:
        raise ConfigError(f"--resolve needs --rounds {RESOLVE_FROM_ROUNDS} or more (the most rounds it may run)",
                          where="edgefarm ab --rounds", fix=f"pass --rounds {MAX_ROUNDS // 2}, say, with --resolve")  # fmt: skip
    done: dict[str, list[Block]] = {"a": [], "b": [], "warmup": []}
    length, c, ratios = None, None, {}
    # a first block of each, not counted: the first run on a host pays cold caches (page cache, the
    # runtime's own), which the ABBA order would charge to A alone
    blocks = [("a", "warmup"), ("b", "warmup")] + [(w, w) for w in order(rounds)]
    block = _BlockRun()
    previous = {s: signal.signal(s, block.handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        for n, (which, side) in enumerate(blocks, 1):
            folder = out / side
            before = set(folder.iterdir()) if folder.is_dir() else set()
            argv = [
                sys.executable,
                "-m",
                "orchestrator",
                "run",
                *common,
                *configs[which],
                "--out",
                str(folder),
            ]
            t0 = time.monotonic()
            code, err = block.run(argv)
            if block.interrupted.is_set():
                click.echo(f"edgefarm ab: interrupted in block {n} of {len(blocks)}; the finished blocks' runs are "
                           f"in {out} (nothing compared: a comparison needs every round)", err=True)  # fmt: skip
                sys.exit(INTERRUPTED_EXIT)
            made = sorted(set(folder.iterdir()) - before) if folder.is_dir() else []
            if code != 0 or len(made) != 1:
                raise ConfigError(
                    f"block {n} (configuration {which.upper()}) exited {code}: {err.strip()[-1500:]}",
                    where=f"edgefarm ab block {n}", fix="run the same `edgefarm run` flags alone and fix what it says")  # fmt: skip
            click.echo(f"block {n}/{len(blocks)}: configuration {which.upper()}"
                       f"{' (warm-up, not counted)' if side == 'warmup' else ''} in {time.monotonic() - t0:.1f} s: {made[0]}",
                       err=True)  # fmt: skip
            done[side].append(_block(made[0]))
            if side == "warmup" and len(done["warmup"]) == 2 and block_s > 0:
                length = block_length(done["warmup"], block_s)
                if length is None:
                    raise ConfigError("the warm-up blocks timed no sample (every one failed)", where=f"{out / 'warmup'}",
                                      fix="run the same `edgefarm run` flags alone and fix what its report says")  # fmt: skip
                common += ["--repeat", str(length.repeat)]
                click.echo(f"edgefarm ab: {length.text(block_s)}", err=True)
            if side != "warmup" and len(done["a"]) == len(done["b"]) and resolve is not None:
                # done[x][k]: round k's block of x; ABBA puts round k's two blocks next to each other
                c, ratios = ab_comparison(done["a"], done["b"])
                if should_stop(len(done["a"]), ratios, resolve):
                    break
    finally:
        for s, old in previous.items():
            signal.signal(s, old)
    if c is None or resolve is None:
        c, ratios = ab_comparison(done["a"], done["b"])
    ran = len(done["a"])
    head = (f"{ran} rounds (ABBA) on the same devices; each ratio is taken between a round's neighbouring "
            "blocks and the interval is over the rounds, so the machine's drift between blocks cancels; "
            f"intervals at {100 * FAMILY_LEVEL:.0f}% each, 95% for all figures at once; "
            + (length.text(block_s) if length else "each block as the run flags say (one pass unless --repeat)") + ".")  # fmt: skip
    if resolve is not None:
        widest = widest_resolution(ratios)
        reached = widest is not None and widest <= resolve
        head += (f"\n--resolve {resolve_pct:g}%: {'reached' if reached else 'NOT reached'} after {ran} of at most "
                 f"{rounds} rounds" + ("" if reached else ": more rounds or longer blocks (--block-s) narrow the interval"))  # fmt: skip
    note = "\n".join([head, *rounds_text(ratios)])
    print_comparison(c, fmt, fail_on, note, "ab", f"{100 * FAMILY_LEVEL:.0f}% interval each")


def _block(run_dir: Path) -> Block:
    """A finished block's run folder as ab reads it."""
    return Block(load_report(run_dir), measured_runs(run_dir))
