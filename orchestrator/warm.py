"""Import what the later stages need (scoring, report charts) while the devices run.

On a farm the host mostly waits for devices; the score and report stages import nltk, rouge-score
and matplotlib (about a second together on this kind of machine). Importing them in a background
thread as soon as the devices start takes that second off the end of the run. Import errors are
left for the stage that needs the module to report.
"""

from __future__ import annotations

import importlib
import threading

LATER_STAGES = (
    "nltk.translate.bleu_score",
    "rouge_score.rouge_scorer",
    "orchestrator.scoring",
    "orchestrator.report.combine",
    "matplotlib.figure",
    "matplotlib.backends.backend_svg",
    "matplotlib.collections",
    "orchestrator.report.charts",
    "orchestrator.report.html",
    "orchestrator.report.printers",
    "orchestrator.report.terminal",
    "orchestrator.scoring.evalscope_table",
)


def warm_later_stages(modules: tuple[str, ...] = LATER_STAGES) -> threading.Thread:
    def load() -> None:
        for name in modules:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001, S112 - the stage that needs it reports the error
                continue

    thread = threading.Thread(target=load, name="warm-imports", daemon=True)
    thread.start()
    return thread
