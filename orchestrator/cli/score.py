"""`edgefarm score RESULTS.json`: score outputs collected anywhere, the way the dataset's format scores."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from ..scoring.types import ScoreReport


@click.command()
@click.argument("results", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--dataset",
    "dataset_spec",
    metavar="PATH",
    default=None,
    help="Dataset folder, rows file or hub id (default: the bundled EdgeMMEval dataset).",
)
@click.option("--format", "format_", metavar="F", help="Dataset format (default: detected).")
@click.option("--subset", metavar="S", help="Subset / split (EdgeMMEval: the data/<split> folder).")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write report.json (default: report.json next to RESULTS).",
)
def score(
    results: Path, dataset_spec: str | None, format_: str | None, subset: str | None, out: Path | None
) -> None:
    """Score RESULTS (a JSON object: test_id -> raw output string) and write report.json.

    Ids missing from RESULTS (or null) are skipped; an empty string is scored and fails.
    The report path goes to stdout, a short summary to stderr.
    """
    from ..datasets import BUNDLED_DATASET, load_dataset, require_valid
    from ..fsutil import write_json_atomic
    from ..scoring import SCORERS, report_json, score_safely
    from ..scoring.edgemm import read_results_file

    _check_bounds(results)
    outputs = read_results_file(results)
    dataset = require_valid(load_dataset(dataset_spec or str(BUNDLED_DATASET), format=format_, subset=subset))
    report = score_safely(SCORERS.get(dataset.format).score, dataset, outputs)
    target = out if out is not None else results.parent / "report.json"
    write_json_atomic(target, report_json(report))
    print_summary(report, Console(stderr=True, soft_wrap=True), dataset_name=dataset.name)
    click.echo(str(target))


def _check_bounds(path: Path) -> None:
    """Refuse a results file too large or nested too deep to parse safely (before the scorer parses it)."""
    from ..errors import ResultsError
    from ..jsonio import DOCUMENT, MiB, bound_problem

    fix = "pass a results.json mapping each test_id to its output string (see `edgefarm score --help`)"
    try:
        if not path.is_file():
            return  # the scorer's reader says what is missing
        size = path.stat().st_size
        if size > DOCUMENT.max_bytes:
            raise ResultsError(
                f"the file is {size / MiB:.1f} MiB, larger than the {DOCUMENT.max_bytes / MiB:g} MiB edgefarm reads",
                where=str(path),
                fix=fix,
            )
        text = path.read_bytes()
    except OSError as e:
        raise ResultsError(f"cannot read results file: {e.strerror or e}", where=str(path), fix=fix) from None
    problem = bound_problem(text, DOCUMENT)
    if problem:
        raise ResultsError(problem[0], where=f"{path}:{problem[1]}", fix=fix)


def print_summary(report: ScoreReport, console: Console, dataset_name: str = "") -> None:
    """Verdict, pass rate, scoring errors and a per-modality / per-metric table of one score record."""
    sm = report.summary
    if sm.verdict:
        style = "bold green" if sm.verdict.startswith("✓") else "bold red"
        console.print(sm.verdict, style=style, markup=False, highlight=False)
    passed = (
        f"passed {sm.total_passed}/{sm.total_scored} ({sm.pass_rate_pct}%), "
        if sm.total_passed is not None
        else f"scored {sm.total_scored}, "
    )
    console.print(
        f"{dataset_name}: {passed}average score {sm.overall_avg}, skipped {len(sm.skipped)}",
        markup=False,
        highlight=False,
    )
    strict = [x for x in report.samples if x.status != "skipped" and "strict_passed" in x.detail]
    if strict:  # scoring/strict.py: the content check beside the card's verdict
        ok = sum(bool(x.detail["strict_passed"]) for x in strict)
        card_only = [x.id for x in strict if x.passed and not x.detail["strict_passed"]]
        console.print(
            f"strict content check: passed {ok}/{len(strict)} ({100.0 * ok / len(strict):.1f}%); "
            f"{len(card_only)} card pass(es) carry no content"
            + (
                ": " + ", ".join(card_only[:10]) + (" ..." if len(card_only) > 10 else "")
                if card_only
                else ""
            ),
            markup=False,
            highlight=False,
        )
    if report.by_modality:
        table = Table(title_justify="left")
        for name in ("modality", "passed", "total", "avg score"):
            table.add_column(name, justify="left" if name == "modality" else "right")
        for m in report.by_modality:
            table.add_row(m.modality, str(m.passed), str(m.total), f"{m.avg_score:.3f}")
        console.print(table)
    if report.metrics:
        table = Table(title_justify="left")
        for name in ("metric", "subset", "num", "score"):
            table.add_column(name, justify="left" if name in ("metric", "subset") else "right")
        for m in report.metrics:
            table.add_row(m.metric, m.subset, str(m.num), str(m.score) if m.score is not None else m.failed)
        console.print(table)
    errors = [s for s in report.samples if s.status == "error"]
    if errors:
        console.print(
            f"{len(errors)} sample(s) could not be scored (counted as failed): "
            + "; ".join(f"{s.id}: {s.error}" for s in errors[:3])
            + (" ..." if len(errors) > 3 else ""),
            style="yellow",
            markup=False,
            highlight=False,
        )
    if sm.unknown_ids:
        unknown = list(sm.unknown_ids)
        shown = ", ".join(unknown[:5]) + (" ..." if len(unknown) > 5 else "")
        console.print(f"{len(unknown)} id(s) in the results are not in the dataset: {shown}", markup=False)
    if sm.note:
        console.print(f"note: {sm.note}", style="yellow", markup=False, highlight=False)
