"""`edgefarm score RESULTS.json`: score outputs collected anywhere, the way the dataset's format scores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table


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
    from ..scoring import SCORERS
    from ..scoring.edgemm import read_results_file

    outputs = read_results_file(results)
    dataset = require_valid(load_dataset(dataset_spec or str(BUNDLED_DATASET), format=format_, subset=subset))
    report = SCORERS.get(dataset.format).score(dataset, outputs)
    target = out if out is not None else results.parent / "report.json"
    write_json_atomic(target, report)
    print_summary(report, Console(stderr=True, soft_wrap=True), dataset_name=dataset.name)
    click.echo(str(target))


def print_summary(report: dict[str, Any], console: Console, dataset_name: str = "") -> None:
    """Verdict, pass rate and a per-modality table; tolerant of scorers with other fields."""
    summary = report.get("summary", {})
    verdict = summary.get("verdict")
    if verdict:
        style = "bold green" if verdict.startswith("✓") else "bold red"
        console.print(verdict, style=style, markup=False, highlight=False)
    skipped = summary.get("skipped", [])
    n_skipped = skipped if isinstance(skipped, int) else len(skipped)
    passed = (
        f"passed {summary['total_passed']}/{summary.get('total_scored', 0)} ({summary.get('pass_rate_pct', 0.0)}%), "
        if "total_passed" in summary
        else f"scored {summary.get('total_scored', 0)}, "
    )
    console.print(
        f"{dataset_name}: {passed}average score {summary.get('overall_avg', 0.0)}, skipped {n_skipped}",
        markup=False,
        highlight=False,
    )
    by_modality = report.get("by_modality") or {}
    if by_modality:
        table = Table(title_justify="left")
        for name in ("modality", "passed", "total", "avg score"):
            table.add_column(name, justify="left" if name == "modality" else "right")
        for modality, row in by_modality.items():
            table.add_row(
                modality,
                str(row.get("passed", "")),
                str(row.get("total", "")),
                f"{row.get('avg_score', 0):.3f}",
            )
        console.print(table)
    metrics = report.get("metrics") or []
    if metrics and isinstance(metrics, list):
        table = Table(title_justify="left")
        for name in ("metric", "subset", "num", "score"):
            table.add_column(name, justify="left" if name in ("metric", "subset") else "right")
        for row in metrics:
            table.add_row(*(str(row.get(k, "")) for k in ("metric", "subset", "num", "score")))
        console.print(table)
    unknown = summary.get("unknown_ids") or []
    if unknown:
        shown = ", ".join(unknown[:5]) + (" ..." if len(unknown) > 5 else "")
        console.print(f"{len(unknown)} id(s) in the results are not in the dataset: {shown}", markup=False)
    if summary.get("note"):
        console.print(f"note: {summary['note']}", style="yellow", markup=False, highlight=False)


COMMANDS = [score]
