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
from ..report.build import load_report
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


class _Block:
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
@click.option("--rounds", type=click.IntRange(2, 20), default=6, show_default=True,
              help="rounds, each a block of A and one of B back to back (ABBA order); a block runs every "
                   "selected sample once (its length: run's --limit / --per-modality)")  # fmt: skip
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), required=True,
              help="folder for the blocks' run folders (a/ and b/; warmup/: one uncounted block of each first)")  # fmt: skip
@click.option(
    "--format", "fmt", type=click.Choice(["term", "json", "md", "csv"]), default="term", show_default=True
)
@click.option("--fail-on", type=click.Choice(["none", "regression", "any"]), default="none", show_default=True,
              help=f"exit {REGRESSION_EXIT} when B is significantly worse than A (regression) or different (any)")  # fmt: skip
@click.argument("run_flags", nargs=-1, type=click.UNPROCESSED)
def ab(
    config_a: str, config_b: str, rounds: int, out: Path, fmt: str, fail_on: str, run_flags: tuple[str, ...]
) -> None:
    """Measure configuration B against A on the same devices in alternating blocks, so the machine's
    drift (load, heat, other jobs) cancels: `edgefarm ab --a "..." --b "..." --out DIR -- RUN FLAGS`
    (the devices, dataset and selection both share). Each block is a real `edgefarm run` of every
    selected sample after one uncounted one (--warmup 1 unless the flags set --warmup); each sample's
    ratio B/A is taken between the neighbouring blocks of a round, and the interval is over the rounds.
    The blocks are not recorded in the results database unless the flags give --db. Ctrl-C: the block under way stops as a run does, ab exits 130 comparing nothing."""
    from ..report.ab import FAMILY_LEVEL, ab_comparison, order, rounds_text

    common = _flags(shlex.join(run_flags), "edgefarm ab RUN FLAGS")
    configs = {"a": _flags(config_a, "--a"), "b": _flags(config_b, "--b")}
    given = {f.split("=", 1)[0] for f in [*common, *configs["a"], *configs["b"]]}
    if "--db" not in given:
        common += ["--db", "none"]  # 2 x rounds + 2 runs of one measurement are not runs of their own
    if "--warmup" not in given:
        # each block is a fresh process whose first sample pays its cold start (lab: 37-579 ms where
        # the others took 10-50 ms), a swing of a whole round's ratio on 8 samples
        common += ["--warmup", "1"]
    runs: dict[str, list[Path]] = {"a": [], "b": []}
    # a first block of each, not counted: the first run on a host pays cold caches (page cache, the
    # runtime's own), which the ABBA order would charge to A alone
    blocks = [("a", "warmup"), ("b", "warmup")] + [(w, w) for w in order(rounds)]
    block = _Block()
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
            if side != "warmup":
                runs[which].append(made[0])
    finally:
        for s, old in previous.items():
            signal.signal(s, old)
    # runs[x][k]: round k's block of x; ABBA puts round k's two blocks next to each other
    c, per_round = ab_comparison([load_report(p) for p in runs["a"]], [load_report(p) for p in runs["b"]])
    head = (f"{rounds} rounds (ABBA) on the same devices; each ratio is taken between a round's neighbouring "
            "blocks and the interval is over the rounds, so the machine's drift between blocks cancels; "
            f"intervals at {100 * FAMILY_LEVEL:.0f}% each, 95% for all figures at once.")  # fmt: skip
    note = "\n".join([head, *rounds_text(per_round)])
    print_comparison(c, fmt, fail_on, note, "ab")


COMMANDS = [ab]
