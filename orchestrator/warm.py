"""Import what the later stages need (scoring, report charts) while the devices run.

On a farm the host mostly waits for devices; the score and report stages import nltk (and with it
numpy), rouge-score and the report's modules (0.4 s of CPU together on this kind of machine).
Importing them on the idle worker (idle.py: nice 19, so they take no CPU from a runtime on this host)
as soon as the devices start takes that time off the end of the run. Import errors are left for the
stage that needs the module to report.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable

from .idle import idle_worker

LATER_STAGES = (
    "nltk.translate.bleu_score",
    "rouge_score.rouge_scorer",
    "orchestrator.scoring",
    "orchestrator.report.combine",
    "orchestrator.report.charts",
    "orchestrator.report.html",
    "orchestrator.report.printers",
    "orchestrator.report.terminal",
    "orchestrator.scoring.evalscope_table",
)


def warm_later_stages(
    also: Iterable[Callable[[], object]] = (), modules: tuple[str, ...] = LATER_STAGES
) -> None:
    """Queue the later stages' imports, then `also` (other head starts), on the idle worker."""
    worker = idle_worker()
    for name in modules:
        worker.submit(lambda name=name: importlib.import_module(name))
    for fn in also:
        worker.submit(fn)
